#include "dataflow/internal/datapoint_codec.h"

#include <fmt/format.h>

#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "core/error.h"
#include "core/little_endian.h"

namespace vkp::dataflow {
namespace {

// Element types as the file stores them: fixed here, whatever order DType has.
constexpr std::pair<DType, std::uint8_t> kDTypeCodes[] = {
    {DType::f32, 1}, {DType::f16, 2}, {DType::i32, 3}, {DType::i64, 4}, {DType::u8, 5}};

std::uint8_t dtype_code(DType dtype) {
  for (const auto& [d, code] : kDTypeCodes)
    if (d == dtype) return code;
  VKP_CHECK(false, "a DType without a record file code");
  return 0;
}

std::optional<DType> dtype_from_code(std::uint8_t code) {
  for (const auto& [d, c] : kDTypeCodes)
    if (c == code) return d;
  return std::nullopt;
}

}  // namespace

void encode_datapoint(const Datapoint& dp, std::vector<std::uint8_t>& out) {
  append_le<std::uint32_t>(out, static_cast<std::uint32_t>(dp.size()));
  for (const Array& a : dp) {
    if (a.shape().rank() > 255)
      throw Error(ErrorCode::invalid_argument,
                  "a component of rank " + std::to_string(a.shape().rank()) + ": datapoint bytes hold ranks up to 255");
    append_le<std::uint8_t>(out, dtype_code(a.dtype()));
    append_le<std::uint8_t>(out, static_cast<std::uint8_t>(a.shape().rank()));
    append_le<std::uint16_t>(out, 0);
    for (std::int64_t d : a.shape().dims()) append_le<std::int64_t>(out, d);
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(a.bytes().data());
    out.insert(out.end(), bytes, bytes + a.nbytes());
  }
}

Datapoint decode_datapoint(std::span<const std::uint8_t> payload) {
  const auto fail = [](const std::string& what) { throw Error(ErrorCode::bad_data, "malformed payload: " + what); };
  std::size_t at = 0;
  const auto need = [&](std::size_t n, const char* what) {
    if (payload.size() - at < n) fail(fmt::format("payload ends inside {}", what));
  };
  need(4, "the component count");
  const auto count = load_le<std::uint32_t>(payload.data());
  at = 4;
  Datapoint dp;
  for (std::uint32_t c = 0; c < count; ++c) {
    need(4, "a component header");
    const std::optional<DType> dtype = dtype_from_code(payload[at]);
    if (!dtype) fail(fmt::format("component {} has unknown dtype code {}", c, payload[at]));
    const int rank = payload[at + 1];
    at += 4;
    need(8 * static_cast<std::size_t>(rank), "a shape");
    std::vector<std::int64_t> dims;
    std::uint64_t numel = 1;
    for (int i = 0; i < rank; ++i, at += 8) {
      dims.push_back(load_le<std::int64_t>(payload.data() + at));
      if (dims.back() < 0 || (dims.back() > 0 && numel > payload.size() / static_cast<std::uint64_t>(dims.back())))
        fail(fmt::format("component {} has an impossible extent {}", c, dims.back()));
      numel *= static_cast<std::uint64_t>(dims.back());
    }
    need(numel * size_of(*dtype), "the element bytes");  // numel <= the payload's size: no overflow
    Array a = Array::uninitialized(*dtype, Shape(std::move(dims)));
    if (a.nbytes() > 0) std::memcpy(a.bytes().data(), payload.data() + at, a.nbytes());
    at += a.nbytes();
    dp.push_back(std::move(a));
  }
  if (at != payload.size()) fail(fmt::format("{} bytes after the last component", payload.size() - at));
  return dp;
}

}  // namespace vkp::dataflow
