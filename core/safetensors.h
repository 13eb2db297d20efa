// The safetensors file format (github.com/huggingface/safetensors), vkpack's checkpoint
// format:
//
//   bytes [0, 8)        N, the header length: uint64, little-endian
//   bytes [8, 8 + N)    the header: UTF-8 JSON, padded with spaces to a multiple of 8
//                         {"__metadata__": {"key": "value", ...},
//                          "<name>": {"dtype": "F32", "shape": [2, 3],
//                                     "data_offsets": [begin, end]}, ...}
//   bytes [8 + N, end)  the data section: each tensor's raw little-endian, row-major
//                       bytes at [begin, end), offsets relative to the data section
//
// Tensors cover the data section exactly, without overlaps or holes, as the format
// requires. dtypes: F32, F16, I32, I64, U8 (vkp::DType f32, f16, i32, i64, u8).
#pragma once

#include <cstddef>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"

namespace vkp {

// A tensor name longer than this is refused by the readers of outside files
// (safetensors, .npz): real names are a few hundred bytes at most, and a name of a
// megabyte would reach regex matching (foreign_weights' rules), which recurses per
// character in libstdc++ and ends on the stack.
inline constexpr std::size_t kMaxTensorNameBytes = 1024;

struct TensorFile {
  // In data-section order: as written, and as read back.
  std::vector<std::pair<std::string, Array>> tensors;
  // The header's "__metadata__": strings only, as the format allows.
  std::map<std::string, std::string> metadata;
};

// Writes `file` to `path` crash-safely: into a temporary file in the same directory,
// flushed and fsync'd, then renamed over `path`. On any failure (a full disk, a missing
// directory, a target that is a directory) throws Error(io) naming `path`, removes the
// temporary, and leaves a previous file at `path` as it was. Error(invalid_argument) for
// an empty, duplicate or reserved ("__metadata__") tensor name.
void write_safetensors(const std::string& path, const TensorFile& file);

// Reads a whole safetensors file. A missing or unreadable file throws Error(io); a
// truncated or malformed one (header length, JSON, dtype, shape, offsets) throws
// Error(bad_data). Both messages name `path` and say what was expected and found.
TensorFile read_safetensors(const std::string& path);

}  // namespace vkp
