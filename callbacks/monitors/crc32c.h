// CRC-32C (Castagnoli): the checksum of TFRecord framing, hence of TensorBoard event
// files. Polynomial 0x1EDC6F41, reflected (0x82F63B78), initial value and final xor
// 0xFFFFFFFF; crc32c("123456789") = 0xE3069283.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>

namespace vkp::callbacks {

// The CRC of `data` continued from `crc`, the CRC of the bytes before it (0 for none):
// crc32c(b, crc32c(a)) == crc32c(a followed by b).
std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc = 0);
std::uint32_t crc32c(std::string_view data, std::uint32_t crc = 0);

// TFRecord's masked CRC: ((crc >> 15) | (crc << 17)) + 0xa282ead8, modulo 2^32. Masking
// keeps the CRC of data that itself holds CRCs from being degenerate.
std::uint32_t masked_crc32c(std::string_view data);

}  // namespace vkp::callbacks
