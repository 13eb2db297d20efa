#include "dataflow/fake_data.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/half.h"

namespace vkp::dataflow {
namespace {

// The integers in [low, high) clipped to what `dtype` holds: {first, count}.
std::pair<std::int64_t, std::uint64_t> integer_range(DType dtype, double low, double high) {
  double first = std::ceil(low), end = std::ceil(high);
  if (dtype == DType::u8) {
    first = std::max(first, 0.0);
    end = std::min(end, 256.0);
  }
  if (end <= first)
    throw Error(ErrorCode::invalid_argument,
                "FakeData: no " + std::string(to_string(dtype)) + " value lies in [" +
                    std::to_string(low) + ", " + std::to_string(high) +
                    "); set FakeDataOptions::low and high to hold at least one integer");
  return {static_cast<std::int64_t>(first), static_cast<std::uint64_t>(end - first)};
}

template <class T>
void fill_integers(Array& a, double low, double high, Rng& rng) {
  const auto [first, count] = integer_range(a.dtype(), low, high);
  for (T& v : a.data<T>()) v = static_cast<T>(first + static_cast<std::int64_t>(rng.below(count)));
}

void fill(Array& a, double low, double high, Rng& rng) {
  const float lo = static_cast<float>(low), hi = static_cast<float>(high);
  switch (a.dtype()) {
    case DType::f32:
      for (float& v : a.data<float>()) v = rng.uniform(lo, hi);
      return;
    case DType::f16: {
      std::byte* out = a.bytes().data();
      for (std::int64_t i = 0; i < a.numel(); ++i) {
        const Half h = to_half(rng.uniform(lo, hi));
        std::memcpy(out + 2 * i, &h.bits, 2);
      }
      return;
    }
    case DType::i32: fill_integers<std::int32_t>(a, low, high, rng); return;
    case DType::i64: fill_integers<std::int64_t>(a, low, high, rng); return;
    case DType::u8: fill_integers<std::uint8_t>(a, low, high, rng); return;
  }
}

}  // namespace

FakeData::FakeData(std::vector<Shape> shapes, FakeDataOptions options)
    : shapes_(std::move(shapes)), options_(std::move(options)) {
  if (options_.dtypes.empty()) options_.dtypes.assign(shapes_.size(), DType::f32);
  require(options_.dtypes.size() == shapes_.size(), ErrorCode::invalid_argument,
          "FakeData: " + std::to_string(shapes_.size()) + " shapes but " +
              std::to_string(options_.dtypes.size()) + " dtypes; give one dtype per shape");
  require(options_.low < options_.high, ErrorCode::invalid_argument,
          "FakeData: low must be below high, got [" + std::to_string(options_.low) + ", " +
              std::to_string(options_.high) + ")");
  // Check the integer ranges now rather than at the first datapoint.
  for (DType dtype : options_.dtypes)
    if (dtype != DType::f32 && dtype != DType::f16) integer_range(dtype, options_.low, options_.high);
}

void FakeData::on_reset_state() {
  rng_ = Rng(options_.seed);
  if (!options_.random) fixed_ = draw();
}

std::optional<Datapoint> FakeData::on_next() {
  if (position_ == options_.size) return std::nullopt;
  ++position_;
  return options_.random ? draw() : fixed_;
}

Datapoint FakeData::draw() {
  Datapoint dp;
  dp.reserve(shapes_.size());
  for (std::size_t i = 0; i < shapes_.size(); ++i) {
    Array a = Array::uninitialized(options_.dtypes[i], shapes_[i]);
    fill(a, options_.low, options_.high, rng_);
    dp.push_back(std::move(a));
  }
  return dp;
}

}  // namespace vkp::dataflow
