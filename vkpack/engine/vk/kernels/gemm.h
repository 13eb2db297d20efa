// GEMM: C = alpha * op(A) * op(B) + beta * C, f32 with f32 accumulation, either operand
// transposed, strided-batched.
//
// Kernels: on CPU devices gemm_pack copies op(B) into aligned, zero-padded panels in a
// workspace and gemm_regblock multiplies op(A), read in place, by them with register
// blocking; on GPUs gemm_tiled reads both in place through shared-memory tiles.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "vkpack/engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/gemm_tiled.comp.
struct GemmTiledPush {
  std::uint32_t m, n, k;
  std::uint32_t lda, ldb, ldc;
  std::uint32_t stride_a, stride_b, stride_c;
  float alpha, beta;
};
static_assert(sizeof(GemmTiledPush) == 44);
static_assert(offsetof(GemmTiledPush, lda) == 12 && offsetof(GemmTiledPush, stride_a) == 24 &&
              offsetof(GemmTiledPush, alpha) == 36);

// Mirrors the push-constant block of shaders/gemm_pack.comp.
struct GemmPackPush {
  std::uint32_t p_extent, k_extent;
  std::uint32_t stride_p, stride_k;
  std::uint32_t src_batch, dst_batch;
  std::uint32_t k_step;  // workgroups along x: each walks k groups this far apart
};
static_assert(sizeof(GemmPackPush) == 28 && offsetof(GemmPackPush, src_batch) == 16 &&
              offsetof(GemmPackPush, k_step) == 24);

// Mirrors the push-constant block of shaders/gemm_regblock.comp.
struct GemmRegblockPush {
  std::uint32_t m, n, k;
  std::uint32_t a_row, a_k;
  std::uint32_t stride_a;
  std::uint32_t b_batch;
  std::uint32_t ldc, stride_c;
  float alpha, beta;
};
static_assert(sizeof(GemmRegblockPush) == 44 && offsetof(GemmRegblockPush, a_row) == 12 &&
              offsetof(GemmRegblockPush, b_batch) == 24 && offsetof(GemmRegblockPush, alpha) == 36);

struct GemmArgs {
  std::uint32_t m = 0, n = 0, k = 0;   // op(A) is m x k, op(B) is k x n, C is m x n
  bool trans_a = false;                // A is stored k x m
  bool trans_b = false;                // B is stored n x k
  std::uint32_t batch = 1;
  // Row strides in elements; nullopt: packed (the stored matrix's column count).
  std::optional<std::uint32_t> lda, ldb, ldc;
  // Batch strides in elements; nullopt: packed. 0 reuses one matrix for every batch.
  std::optional<std::uint32_t> stride_a, stride_b, stride_c;
  float alpha = 1.0f;
  float beta = 0.0f;                   // 0: C is written without being read
  KernelChoice choice = KernelChoice::automatic;
};

// Bytes of scratch memory gemm() needs (packed op(B) on CPU devices, 0 on GPUs).
std::size_t gemm_workspace_bytes(const GemmArgs& args, const Device& device);

// Records C = alpha * op(A) op(B) + beta * C; `workspace` holds at least
// gemm_workspace_bytes() bytes. Throws Error(invalid_argument) when a slice is too
// small for the shapes and strides, or a row stride is shorter than its row.
void gemm(Recording& recording, const GemmArgs& args, const BufferSlice& a, const BufferSlice& b,
          const BufferSlice& c, const BufferSlice& workspace);

}  // namespace vkp::vk
