// A datapoint as bytes: the payload of record files (dataflow/record_file.h) and the
// values of LMDBSerializer's databases (dataflow/lmdb_data.h). Integers little-endian:
//
//   u32 component count, then per component
//   u8 dtype (1 f32, 2 f16, 3 i32, 4 i64, 5 u8), u8 rank, u16 0, i64 extents[rank],
//   the element bytes
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// Appends `dp`'s bytes to `out`; Error(invalid_argument) for a component of rank over 255.
void encode_datapoint(const Datapoint& dp, std::vector<std::uint8_t>& out);
// Error(bad_data) "malformed payload: <what>" (a dtype code unknown, an extent negative
// or more than the bytes hold, bytes missing or left over), checked before allocating.
Datapoint decode_datapoint(std::span<const std::uint8_t> payload);

}  // namespace vkp::dataflow
