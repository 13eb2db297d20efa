// IEEE 754 binary16 <-> binary32 conversion on the host (round to nearest even).
#pragma once

#include <cstdint>

namespace vkp {

// The bits of a binary16 value.
struct Half {
  std::uint16_t bits = 0;
};

Half to_half(float value);
float to_float(Half value);

}  // namespace vkp
