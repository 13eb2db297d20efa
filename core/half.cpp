#include "core/half.h"

#include <bit>
#include <cstring>

namespace vkp {

Half to_half(float value) {
  const std::uint32_t x = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t sign = (x >> 16) & 0x8000u;
  const std::uint32_t abs = x & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // Inf or NaN; keep NaNs quiet and non-zero
    const std::uint32_t nan = abs > 0x7f800000u ? 0x0200u | ((abs >> 13) & 0x3ffu) : 0u;
    return {static_cast<std::uint16_t>(sign | 0x7c00u | nan)};
  }
  if (abs >= 0x477ff000u) return {static_cast<std::uint16_t>(sign | 0x7c00u)};  // overflow
  if (abs < 0x38800000u) {  // result is subnormal or zero: shift the mantissa right
    if (abs < 0x33000000u) return {static_cast<std::uint16_t>(sign)};
    const std::uint32_t exponent = abs >> 23;
    const std::uint32_t mantissa = (abs & 0x7fffffu) | 0x800000u;
    const std::uint32_t shift = 126u - exponent;  // 14..24
    std::uint32_t half = mantissa >> shift;
    const std::uint32_t rest = mantissa & ((1u << shift) - 1u);
    const std::uint32_t halfway = 1u << (shift - 1u);
    if (rest > halfway || (rest == halfway && (half & 1u))) ++half;
    return {static_cast<std::uint16_t>(sign | half)};
  }
  // Normal: rebias the exponent, round the 13 dropped mantissa bits to nearest even.
  std::uint32_t half = ((abs - 0x38000000u) >> 13);
  const std::uint32_t rest = abs & 0x1fffu;
  if (rest > 0x1000u || (rest == 0x1000u && (half & 1u))) ++half;
  return {static_cast<std::uint16_t>(sign | half)};
}

float to_float(Half value) {
  const std::uint32_t h = value.bits;
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exponent = (h >> 10) & 0x1fu;
  std::uint32_t mantissa = h & 0x3ffu;
  if (exponent == 0x1fu) return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  if (exponent != 0) return std::bit_cast<float>(sign | ((exponent + 112u) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);
  // Subnormal half: normalise into a float.
  std::uint32_t e = 113;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    --e;
  }
  return std::bit_cast<float>(sign | (e << 23) | ((mantissa & 0x3ffu) << 13));
}

std::vector<float> pack_halves(std::span<const float> values) {
  std::vector<std::uint16_t> bits(values.size() + values.size() % 2, 0);
  for (std::size_t i = 0; i < values.size(); ++i) bits[i] = to_half(values[i]).bits;
  std::vector<float> words(bits.size() / 2);
  if (!words.empty()) std::memcpy(words.data(), bits.data(), words.size() * 4);
  return words;
}

}  // namespace vkp
