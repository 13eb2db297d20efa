#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef VKP_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
// gemm_tiled: C = alpha * op(A) * op(B) + beta * C, strided-batched, f32 with f32
// accumulation; the path for GPUs.
//
// Each workgroup computes a kTileM x kTileN tile of C, stepping through K kTileK at a
// time: the workgroup stages op(A) and op(B) tiles in shared memory (reading along the
// operand's contiguous axis, so global loads coalesce), then each invocation
// accumulates a kMicroM x kMicroN block in registers.
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

shared float tile_a[kTileK][kTileM];
shared float tile_b[kTileK][kTileN];

void main() {
  const uint threads = gl_WorkGroupSize.x;
  const uint t = gl_LocalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_a = gl_WorkGroupID.z * p.stride_a;
  const uint base_b = gl_WorkGroupID.z * p.stride_b;
  const uint base_c = gl_WorkGroupID.z * p.stride_c;
  const uint micro_cols = kTileN / kMicroN;
  const uint tm = (t / micro_cols) * kMicroM, tn = (t % micro_cols) * kMicroN;

  float acc[kMicroM][kMicroN];
  for (uint i = 0; i < kMicroM; ++i)
    for (uint j = 0; j < kMicroN; ++j) acc[i][j] = 0.0;

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
    for (uint kk = 0; kk < kTileK; ++kk) {
      float av[kMicroM], bv[kMicroN];
      for (uint i = 0; i < kMicroM; ++i) av[i] = tile_a[kk][tm + i];
      for (uint j = 0; j < kMicroN; ++j) bv[j] = tile_b[kk][tn + j];
      for (uint i = 0; i < kMicroM; ++i)
        for (uint j = 0; j < kMicroN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  for (uint i = 0; i < kMicroM; ++i) {
    const uint row = row0 + tm + i;
    if (row >= p.m) break;
    for (uint j = 0; j < kMicroN; ++j) {
      const uint col = col0 + tn + j;
      if (col >= p.n) break;
      const uint at = base_c + row * p.ldc + col;
      const float v = p.beta == 0.0 ? p.alpha * acc[i][j] : p.alpha * acc[i][j] + p.beta * load_c(at);
      store_c(at, epilogue(v, row, col, at));
    }
  }
}
