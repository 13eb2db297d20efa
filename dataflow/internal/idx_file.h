// IDX files (the format of MNIST and Fashion-MNIST), unsigned-byte kind.
//
// Layout, big-endian: magic 0x00 0x00 0x08 <rank>, then <rank> u32 extents, then the
// bytes, row-major. 0x08 is the "unsigned byte" element type, the only one MNIST uses.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace vkp::dataflow {

struct IdxBytes {
  std::vector<std::int64_t> dims;
  std::vector<std::uint8_t> data;  // product(dims) bytes
};

// Parses `bytes` (a whole file, already gunzipped), which must hold an IDX u8 array of
// `rank` dimensions and nothing after it. Error(bad_data) naming `name` and saying what
// was wrong: wrong magic, short read, bytes after the data.
IdxBytes parse_idx_u8(std::vector<std::uint8_t> bytes, int rank, const std::string& name);

// read_file_bytes + parse_idx_u8.
IdxBytes read_idx_u8(const std::filesystem::path& path, int rank);

}  // namespace vkp::dataflow
