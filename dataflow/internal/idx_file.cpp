#include "dataflow/internal/idx_file.h"

#include <fmt/format.h>

#include <cstdint>

#include "core/error.h"
#include "dataflow/internal/file_bytes.h"

namespace vkp::dataflow {
namespace {

std::uint32_t big_endian_u32(const std::uint8_t* p) {
  return (std::uint32_t{p[0]} << 24) | (std::uint32_t{p[1]} << 16) | (std::uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

IdxBytes parse_idx_u8(std::vector<std::uint8_t> bytes, int rank, const std::string& name) {
  const std::uint32_t want_magic = 0x0800u | static_cast<std::uint32_t>(rank);
  if (bytes.size() < 4)
    throw Error(ErrorCode::bad_data, fmt::format("{}: short read: {} bytes, an IDX header needs at least {}", name,
                                                 bytes.size(), 4 + 4 * rank));
  const std::uint32_t magic = big_endian_u32(bytes.data());
  if (magic != want_magic)
    throw Error(ErrorCode::bad_data,
                fmt::format("{}: wrong magic 0x{:08x}, expected 0x{:08x} (IDX of unsigned bytes, {} dimensions)", name,
                            magic, want_magic, rank));
  const std::size_t header = 4 + 4 * static_cast<std::size_t>(rank);
  if (bytes.size() < header)
    throw Error(ErrorCode::bad_data, fmt::format("{}: short read: the header needs {} bytes, the file has {}", name,
                                                 header, bytes.size()));
  IdxBytes idx;
  std::size_t count = 1;
  std::string dims_text;
  for (int i = 0; i < rank; ++i) {
    const std::uint32_t d = big_endian_u32(bytes.data() + 4 + 4 * i);
    idx.dims.push_back(d);
    if (d != 0 && count > SIZE_MAX / d)
      throw Error(ErrorCode::bad_data, fmt::format("{}: malformed: the extents overflow a 64-bit size", name));
    count *= d;
    dims_text += (i ? " x " : "") + std::to_string(d);
  }
  const std::size_t have = bytes.size() - header;
  if (have < count)
    throw Error(ErrorCode::bad_data, fmt::format("{}: short read: the header says {} = {} bytes of data, the file has {}",
                                                 name, dims_text, count, have));
  if (have > count)
    throw Error(ErrorCode::bad_data, fmt::format("{}: malformed: {} bytes after the {} = {} bytes of data", name,
                                                 have - count, dims_text, count));
  bytes.erase(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(header));
  idx.data = std::move(bytes);
  return idx;
}

IdxBytes read_idx_u8(const std::filesystem::path& path, int rank) {
  return parse_idx_u8(read_file_bytes(path), rank, path.string());
}

}  // namespace vkp::dataflow
