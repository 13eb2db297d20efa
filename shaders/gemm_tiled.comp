#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// gemm_tiled: C = alpha * op(A) * op(B) + beta * C, strided-batched, f32 with f32
// accumulation; the path for GPUs.
//
// Each workgroup computes a kTileM x kTileN tile of C, stepping through K kTileK at a
// time: the workgroup stages op(A) and op(B) tiles in shared memory (reading along the
// operand's contiguous axis, so global loads coalesce), then each invocation
// accumulates a kMicroM x kMicroN block in registers: runs of kRun adjacent rows (and
// columns), the runs of one invocation kRun * (kTileM / kMicroM) rows apart. kRun =
// kMicroM: one block of adjacent elements; kRun 1: every row strided, consecutive
// invocations reading consecutive words of shared memory; kRun 4: runs that load as
// vec4s with few bank conflicts. The shared tiles' rows are padded by 4 words: rows stay
// 16-byte aligned, and the stores of a column (kTileK consecutive invocations) spread
// over 8 banks.
// The loops over the block and over k are unrolled ([[unroll]]): the accumulators must
// stay in registers (NVIDIA's compiler puts an array it indexes at run time in memory).
//   Shapes and strides as in gemm_regblock.
// Launch: (ceil(N / kTileN), ceil(M / kTileM), batch); workgroup size
// (kTileM / kMicroM) * (kTileN / kMicroN). Push constants mirror vkp::vk::GemmPush.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kTileM = 64;
layout(constant_id = 2) const uint kTileN = 64;
layout(constant_id = 3) const uint kTileK = 16;
layout(constant_id = 4) const uint kMicroM = 4;
layout(constant_id = 5) const uint kMicroN = 4;
layout(constant_id = 6) const bool kTransA = false;
layout(constant_id = 7) const bool kTransB = false;
layout(constant_id = 8) const uint kRun = 4;

#include "f16_storage.glsl"
VKP_INPUT(0, A, a)
VKP_INPUT(1, B, b)
VKP_INOUT(2, C, c)
layout(push_constant) uniform Push {
  uint m, n, k;
  uint lda, ldb, ldc;
  uint stride_a, stride_b, stride_c;
  float alpha, beta;
  uint bias_row, bias_col;  // the epilogue's (epilogue.glsl)
  float act_alpha, gate_alpha;
} p;

#include "epilogue.glsl"

shared float tile_a[kTileK][kTileM + 4];
shared float tile_b[kTileK][kTileN + 4];

void main() {
  const uint threads = gl_WorkGroupSize.x;
  const uint t = gl_LocalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_a = gl_WorkGroupID.z * p.stride_a;
  const uint base_b = gl_WorkGroupID.z * p.stride_b;
  const uint base_c = gl_WorkGroupID.z * p.stride_c;
  const uint micro_rows = kTileM / kMicroM, micro_cols = kTileN / kMicroN;
  // Row i of the block is tm + (i / run_m) * step_m + i % run_m, column j likewise.
  const uint run_m = min(kRun, kMicroM), run_n = min(kRun, kMicroN);
  const uint tm = (t / micro_cols) * run_m, tn = (t % micro_cols) * run_n;
  const uint step_m = micro_rows * run_m, step_n = micro_cols * run_n;

  float acc[kMicroM][kMicroN];
  [[unroll]] for (uint i = 0; i < kMicroM; ++i)
    [[unroll]] for (uint j = 0; j < kMicroN; ++j) acc[i][j] = 0.0;

  for (uint k0 = 0; k0 < p.k; k0 += kTileK) {
    for (uint e = t; e < kTileK * kTileM; e += threads) {
      // Consecutive invocations take consecutive addresses of A.
      const uint kk = kTransA ? e / kTileM : e % kTileK;
      const uint mm = kTransA ? e % kTileM : e / kTileK;
      const uint row = row0 + mm, kg = k0 + kk;
      float v = 0.0;
      if (row < p.m && kg < p.k) v = load_a(base_a + (kTransA ? kg * p.lda + row : row * p.lda + kg));
      tile_a[kk][mm] = v;
    }
    for (uint e = t; e < kTileK * kTileN; e += threads) {
      const uint kk = kTransB ? e % kTileK : e / kTileN;
      const uint nn = kTransB ? e / kTileK : e % kTileN;
      const uint col = col0 + nn, kg = k0 + kk;
      float v = 0.0;
      if (col < p.n && kg < p.k) v = load_b(base_b + (kTransB ? col * p.ldb + kg : kg * p.ldb + col));
      tile_b[kk][nn] = v;
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < kTileK; ++kk) {
      float av[kMicroM], bv[kMicroN];
      [[unroll]] for (uint i = 0; i < kMicroM; ++i) av[i] = tile_a[kk][tm + (i / run_m) * step_m + i % run_m];
      [[unroll]] for (uint j = 0; j < kMicroN; ++j) bv[j] = tile_b[kk][tn + (j / run_n) * step_n + j % run_n];
      [[unroll]] for (uint i = 0; i < kMicroM; ++i)
        [[unroll]] for (uint j = 0; j < kMicroN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  [[unroll]] for (uint i = 0; i < kMicroM; ++i) {
    const uint row = row0 + tm + (i / run_m) * step_m + i % run_m;
    if (row >= p.m) break;
    [[unroll]] for (uint j = 0; j < kMicroN; ++j) {
      const uint col = col0 + tn + (j / run_n) * step_n + j % run_n;
      if (col >= p.n) break;
      const uint at = base_c + row * p.ldc + col;
      const float v = p.beta == 0.0 ? p.alpha * acc[i][j] : p.alpha * acc[i][j] + p.beta * load_c(at);
      store_c(at, epilogue(v, row, col, at));
    }
  }
}
