// Data movement of 32-bit elements: fill, strided copy (slice, permute, broadcast,
// concatenate) and transpose of the last two axes. Kernels: fill, copy, transpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/fill.comp.
struct FillPush {
  std::uint32_t n;
  std::uint32_t value;
};
static_assert(sizeof(FillPush) == 8);

// Mirrors the push-constant block of shaders/copy.comp.
struct CopyPush {
  static constexpr int kMaxRank = 6;
  std::uint32_t n;
  std::uint32_t rank;
  std::uint32_t src_offset;
  std::uint32_t dst_offset;
  std::uint32_t dims[kMaxRank];
  std::uint32_t src_strides[kMaxRank];
  std::uint32_t dst_strides[kMaxRank];
};
static_assert(sizeof(CopyPush) == 88 && offsetof(CopyPush, dims) == 16 && offsetof(CopyPush, src_strides) == 40 &&
              offsetof(CopyPush, dst_strides) == 64);

// Mirrors the push-constant block of shaders/transpose.comp.
struct TransposePush {
  std::uint32_t rows;
  std::uint32_t cols;
};
static_assert(sizeof(TransposePush) == 8);

// dst[0..n) = value (f32 bits, or any 32-bit word).
// A float16 `dst` (BufferSlice::f16) is filled with `value` rounded to float16.
void fill(Recording& recording, const BufferSlice& dst, std::uint64_t n, float value);
void fill_bits(Recording& recording, const BufferSlice& dst, std::uint64_t n, std::uint32_t word);

// A strided region of src written to a strided region of dst (element offsets and
// strides). Adjacent dims that both sides step through contiguously are merged, so the
// region may have more than 6 dims as long as at most 6 remain; no dims is one element.
struct StridedCopy {
  std::vector<std::uint32_t> dims;         // extents, outermost first
  std::vector<std::uint32_t> src_strides;  // one per dim
  std::uint32_t src_offset = 0;
  std::uint32_t dst_offset = 0;
  std::vector<std::uint32_t> dst_strides;  // one per dim; empty: dense row-major
};
void copy(Recording& recording, const StridedCopy& args, const BufferSlice& src, const BufferSlice& dst);

// `batch` matrices of rows x cols.
struct MatrixBatch {
  std::uint32_t batch = 1, rows = 0, cols = 0;
};
// dst[b] = transpose(src[b]) for the matrices of `of` (src) -> cols x rows.
void transpose(Recording& recording, const MatrixBatch& of, const BufferSlice& src, const BufferSlice& dst,
               KernelChoice choice = KernelChoice::automatic);

}  // namespace vkp::vk
