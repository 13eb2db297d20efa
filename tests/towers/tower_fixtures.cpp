#include "tower_fixtures.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "core/rng.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {
std::vector<std::unique_ptr<vk::Device>> opened;
}  // namespace

std::vector<vk::Device*> tower_devices(int count) {
  while (static_cast<int>(opened.size()) < count)
    opened.push_back(std::make_unique<vk::Device>(instance(), device_index(), device_options()));
  std::vector<vk::Device*> out;
  for (int k = 0; k < count; ++k) out.push_back(opened[static_cast<std::size_t>(k)].get());
  return out;
}

void close_tower_devices() { opened.clear(); }

std::vector<std::vector<Array>> three_class_batches(int count, std::int64_t rows, std::uint64_t seed,
                                                    std::int64_t features) {
  Rng rng(seed);
  std::vector<std::vector<Array>> out;
  for (int s = 0; s < count; ++s) {
    Array x(DType::f32, Shape{rows, features}), label(DType::i32, Shape{rows});
    for (std::int64_t i = 0; i < rows; ++i) {
      const auto k = static_cast<std::int32_t>(rng.below(3));
      label.data<std::int32_t>()[static_cast<std::size_t>(i)] = k;
      for (std::int64_t d = 0; d < features; ++d)
        x.data<float>()[static_cast<std::size_t>(i * features + d)] = (d == k ? 1.5f : 0.0f) + rng.normal();
    }
    out.push_back({std::move(x), std::move(label)});
  }
  return out;
}

double relative_difference(const Array& got, const Array& want) {
  double diff = 0, norm = 0;
  for (std::size_t i = 0; i < want.data<float>().size(); ++i) {
    const double w = want.data<float>()[i], d = got.data<float>()[i] - w;
    diff += d * d;
    norm += w * w;
  }
  return std::sqrt(diff) / std::max(std::sqrt(norm), 1e-30);
}

std::vector<Array> rows(const std::vector<Array>& batch, std::int64_t begin, std::int64_t end) {
  std::vector<Array> out;
  for (const Array& a : batch) {
    const std::int64_t row_bytes = static_cast<std::int64_t>(a.nbytes()) / a.shape()[0];
    std::vector<std::int64_t> dims = a.shape().dims();
    dims[0] = end - begin;
    Array part(a.dtype(), Shape(dims));
    std::memcpy(part.bytes().data(), a.bytes().data() + begin * row_bytes,
                static_cast<std::size_t>((end - begin) * row_bytes));
    out.push_back(std::move(part));
  }
  return out;
}

}  // namespace vkp::test
