// NumPy's array files, as np.save, np.savez and np.savez_compressed write them, so that
// weights from NumPy or PyTorch (`np.savez(path, **{k: v.numpy() ...})`) come in:
//
//   .npy   b"\x93NUMPY", version 1.0 / 2.0 / 3.0, a header length (uint16 or uint32,
//          little-endian), a Python dict literal {'descr': '<f4', 'fortran_order':
//          False, 'shape': (2, 3), } padded with spaces to a multiple of 64 bytes, then
//          the raw elements
//   .npz   a zip archive (stored or deflated, read through libzip) of <name>.npy
//
// Element types: float32, float16, int32, int64, uint8 and bool as vkpack's DTypes, and
// float64 converted to float32 (NumPy's default type; the conversion rounds to nearest).
// Fortran-ordered arrays are returned in C order. Big-endian data, object arrays and
// other types are Error(unsupported); a malformed file is Error(bad_data); both name the
// file and the array.
#pragma once

#include <cstddef>
#include <map>
#include <span>
#include <string>

#include "core/array.h"

namespace vkp {

// One .npy image; `what` names it in errors.
Array parse_npy(std::span<const std::byte> bytes, const std::string& what);
Array read_npy(const std::string& path);
// Every array of an .npz, by its name without ".npy".
std::map<std::string, Array> read_npz(const std::string& path);

// The .npy image of `array` (version 1.0, C order, little-endian; u8 as '|u1').
std::string npy_bytes(const Array& array);
// An .npz as np.savez writes it (a zip of stored <name>.npy entries), which np.load reads;
// libzip writes it beside `path` and renames it into place, so a crash leaves the old
// file. Names must be non-empty and hold no '/'. Error(io) when it cannot be written.
void write_npz(const std::string& path, const std::map<std::string, Array>& arrays);

}  // namespace vkp
