// What gemm.cpp (the checks and the CPU path) and gemm_gpu.cpp (the GPU path) share:
// the operands' stored layout with its defaults filled in, and the GPU path's entry.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/gemm.h"

namespace vkp::vk {

struct GemmLayout {
  std::uint32_t lda, ldb, ldc;
  std::uint32_t stride_a, stride_b, stride_c;
};
// Error(invalid_argument) when a row stride is shorter than its row.
GemmLayout gemm_layout(const GemmArgs& args);
// The last element (plus one) of `batch` matrices of rows x cols, row stride ld, batch stride `stride`.
std::uint64_t gemm_extent(std::uint32_t rows, std::uint32_t cols, std::uint32_t ld, std::uint32_t batch,
                          std::uint32_t stride);
// What a product reads and writes: C = alpha op(A) op(B) + beta C.
struct GemmSlices {
  BufferSlice a, b, c;
};
// The GPU path of gemm(), after gemm() has checked the slices and the epilogue.
void gemm_gpu(Recording& recording, const GemmArgs& args, const GemmLayout& l, const GemmSlices& slices,
              const GemmEpilogue& epilogue);

}  // namespace vkp::vk
