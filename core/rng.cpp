#include "core/rng.h"

#include <cmath>
#include <numbers>

namespace vkp {

std::array<std::uint32_t, 4> philox4x32(std::array<std::uint32_t, 4> c,
                                        std::array<std::uint32_t, 2> k) {
  constexpr std::uint32_t kMul0 = 0xD2511F53u, kMul1 = 0xCD9E8D57u;
  constexpr std::uint32_t kWeyl0 = 0x9E3779B9u, kWeyl1 = 0xBB67AE85u;
  for (int round = 0; round < 10; ++round) {
    const std::uint64_t p0 = std::uint64_t{kMul0} * c[0];
    const std::uint64_t p1 = std::uint64_t{kMul1} * c[2];
    const std::uint32_t hi0 = static_cast<std::uint32_t>(p0 >> 32), lo0 = static_cast<std::uint32_t>(p0);
    const std::uint32_t hi1 = static_cast<std::uint32_t>(p1 >> 32), lo1 = static_cast<std::uint32_t>(p1);
    c = {hi1 ^ c[1] ^ k[0], lo1, hi0 ^ c[3] ^ k[1], lo0};
    k[0] += kWeyl0;
    k[1] += kWeyl1;
  }
  return c;
}

std::uint32_t Rng::next_u32() {
  if (used_ == 4) {
    words_ = philox4x32({static_cast<std::uint32_t>(block_), static_cast<std::uint32_t>(block_ >> 32),
                         static_cast<std::uint32_t>(stream_), static_cast<std::uint32_t>(stream_ >> 32)},
                        {static_cast<std::uint32_t>(seed_), static_cast<std::uint32_t>(seed_ >> 32)});
    ++block_;
    used_ = 0;
  }
  return words_[static_cast<std::size_t>(used_++)];
}

std::uint64_t Rng::next_u64() {
  const std::uint64_t lo = next_u32();
  return (std::uint64_t{next_u32()} << 32) | lo;
}

float Rng::uniform() { return static_cast<float>(next_u32() >> 8) * 0x1.0p-24f; }

float Rng::normal() {
  // 1 - u keeps log's argument in (0, 1].
  const double u1 = 1.0 - static_cast<double>(next_u32()) * 0x1.0p-32;
  const double u2 = static_cast<double>(next_u32()) * 0x1.0p-32;
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * std::numbers::pi * u2));
}

std::uint64_t Rng::below(std::uint64_t n) {
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % n;
  std::uint64_t x;
  do x = next_u64(); while (x >= limit);
  return x % n;
}

}  // namespace vkp
