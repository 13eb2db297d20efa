#include "callbacks/monitors/crc32c.h"

#include <array>

namespace vkp::callbacks {
namespace {

constexpr std::uint32_t kReflectedPolynomial = 0x82F63B78u;

// kTable[b] = the CRC register after shifting byte b through it (one byte per step).
constexpr std::array<std::uint32_t, 256> make_table() {
  std::array<std::uint32_t, 256> table{};
  for (std::uint32_t i = 0; i < 256; ++i) {
    std::uint32_t c = i;
    for (int bit = 0; bit < 8; ++bit) c = (c & 1u) ? (c >> 1) ^ kReflectedPolynomial : c >> 1;
    table[i] = c;
  }
  return table;
}
constexpr std::array<std::uint32_t, 256> kTable = make_table();

}  // namespace

std::uint32_t crc32c(std::span<const std::byte> data, std::uint32_t crc) {
  crc = ~crc;
  for (std::byte b : data) crc = kTable[(crc ^ static_cast<std::uint32_t>(b)) & 0xffu] ^ (crc >> 8);
  return ~crc;
}

std::uint32_t crc32c(std::string_view data, std::uint32_t crc) {
  return crc32c(std::as_bytes(std::span<const char>(data.data(), data.size())), crc);
}

std::uint32_t masked_crc32c(std::string_view data) {
  const std::uint32_t crc = crc32c(data);
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace vkp::callbacks
