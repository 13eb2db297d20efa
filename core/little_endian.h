// Little-endian integers in byte buffers, whatever the host's order: the one place the
// file formats (safetensors' header length, record files, the pipeline cache wrapper)
// read and write them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

namespace vkp {

// The integer T stored little-endian in sizeof(T) bytes at `at` (any alignment; Byte is
// std::byte, char or std::uint8_t). Signed T is read as its two's complement.
template <class T, class Byte>
T load_le(const Byte* at) {
  static_assert(std::is_integral_v<T> && sizeof(Byte) == 1);
  std::uint64_t value = 0;
  for (std::size_t i = 0; i < sizeof(T); ++i) value |= std::uint64_t{static_cast<std::uint8_t>(at[i])} << (8 * i);
  return static_cast<T>(value);
}

// Writes `value` little-endian into sizeof(T) bytes at `at`.
template <class T, class Byte>
void store_le(Byte* at, T value) {
  static_assert(std::is_integral_v<T> && sizeof(Byte) == 1);
  const auto bits = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) at[i] = static_cast<Byte>((bits >> (8 * i)) & 0xff);
}

// Appends `value` little-endian to `out`, a container of bytes (std::string,
// std::vector<std::uint8_t>, ...).
template <class T, class Bytes>
void append_le(Bytes& out, T value) {
  const auto bits = static_cast<std::uint64_t>(value);
  for (std::size_t i = 0; i < sizeof(T); ++i) out.push_back(static_cast<typename Bytes::value_type>((bits >> (8 * i)) & 0xff));
}

}  // namespace vkp
