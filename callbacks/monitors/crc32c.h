// TFRecord's masked CRC-32C, the checksum of TensorBoard event files' framing, over
// core/crc32c.h's CRC (the one CRC-32C of vkpack).
#pragma once

#include <cstdint>
#include <string_view>

namespace vkp::callbacks {

// ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32, of crc = CRC-32C(data). Masking
// keeps the CRC of data that itself holds CRCs from being degenerate.
std::uint32_t masked_crc32c(std::string_view data);

}  // namespace vkp::callbacks
