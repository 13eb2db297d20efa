// IEEE 754 binary16 <-> binary32 conversion on the host (round to nearest even).
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace vkp {

// The bits of a binary16 value.
struct Half {
  std::uint16_t bits = 0;
};

Half to_half(float value);
float to_float(Half value);

// `values` rounded to binary16 and packed two a 32-bit word, as a float16 buffer holds
// them (vk::BufferSlice::f16), in floats to upload; an odd count is padded with a zero
// half.
std::vector<float> pack_halves(std::span<const float> values);

}  // namespace vkp
