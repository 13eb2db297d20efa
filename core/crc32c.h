// CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of iSCSI, ext4 and
// of each tensor in vkpack's checkpoints. Debian ships no C or C++ library for it, and
// zlib's crc32 is the other polynomial.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

namespace vkp {

// The CRC-32C of `bytes`; pass an earlier result as `crc` to continue over more bytes.
std::uint32_t crc32c(std::span<const std::byte> bytes, std::uint32_t crc = 0);

}  // namespace vkp
