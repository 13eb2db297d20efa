#version 450
#extension GL_GOOGLE_include_directive : require
#ifdef VKP_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
// conv_tiled: implicit-GEMM convolution on GPUs, gemm_tiled's tiling with the patch
// operand read through the convolution's index map (no im2col matrix in memory).
//
// Per group (workgroup z): C = A . B with A the patch matrix P of shaders/conv_pack.comp
// (P[pixel][kk], kk = (i * kw + j) * cg + ch, 0 where the tap is padding), seen as
//   kPixelsAlongK false: A[r][k] = P[r][k]  (forward: out = P . w; input gradient:
//                                             dx = P'(dy) . w' with the adjoint's map)
//   kPixelsAlongK true:  A[r][k] = P[k][r]  (filter gradient: dw = P^T . dy)
// B[k][col] at b[z * stride_b + k * ldb + col] and C[r][col] at c[z * stride_c + r * ldc
// + col], written (not accumulated) through the GEMM epilogue (epilogue.glsl). Each workgroup computes a kTileM x kTileN tile of
// C, staging A and B tiles in shared memory; consecutive invocations load consecutive
// channels of A (a pixel's channels are contiguous in NHWC). K may be cut into splits of
// k_split: split s sums k in [s * k_split, (s + 1) * k_split) into its own partial C at
// c[s * split_stride + ...] (the filter gradient's long K over few tiles; a reduction adds
// the partial sums afterwards). Launch: (ceil(n / kTileN), ceil(m / kTileM), groups *
// splits), z = s * groups + group; workgroup (kTileM / kMicroM) * (kTileN / kMicroN). Push
// constants mirror vkp::vk::ConvTiledPush.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kTileM = 64;
layout(constant_id = 2) const uint kTileN = 64;
layout(constant_id = 3) const uint kTileK = 16;
layout(constant_id = 4) const uint kMicroM = 4;
layout(constant_id = 5) const uint kMicroN = 4;
layout(constant_id = 6) const bool kPixelsAlongK = false;

#include "f16_storage.glsl"
VKP_INPUT(0, X, x)
VKP_INPUT(1, B, b)
VKP_OUTPUT(2, C, c)
layout(push_constant) uniform Push {
  uint n, h, w, ch;         // image [N, H, W, C]
  uint oh, ow;              // output pixels
  uint kh, kw;
  uint stride_h, stride_w;
  int dilation_h, dilation_w;  // negative with negative padding: the adjoint's map
  int pad_top, pad_left;
  uint groups;
  uint m, cols, k;          // of the GEMM: C is m x cols, A m x k
  uint ldb, ldc;
  uint stride_b, stride_c;
  uint bias_row, bias_col;  // the epilogue's (epilogue.glsl)
  float act_alpha, gate_alpha;
  uint k_split;             // k of one split (k when unsplit)
  uint split_stride;        // elements between the splits' partial Cs
} p;

#include "epilogue.glsl"

shared float tile_a[kTileK][kTileM];
shared float tile_b[kTileK][kTileN];

float patch_value(uint pixel, uint kk, uint grp) {
  const uint cg = p.ch / p.groups;
  const uint tap = kk / cg, j = tap % p.kw, i = tap / p.kw;
  const uint ox = pixel % p.ow, oy = (pixel / p.ow) % p.oh, bi = pixel / (p.ow * p.oh);
  const int y = int(oy * p.stride_h) + int(i) * p.dilation_h - p.pad_top;
  const int xx = int(ox * p.stride_w) + int(j) * p.dilation_w - p.pad_left;
  float v = 0.0;
  if (y >= 0 && y < int(p.h) && xx >= 0 && xx < int(p.w))
    v = load_x(((bi * p.h + uint(y)) * p.w + uint(xx)) * p.ch + grp * cg + kk % cg);
  return v;
}

void main() {
  const uint threads = gl_WorkGroupSize.x, t = gl_LocalInvocationID.x;
  const uint grp = gl_WorkGroupID.z % p.groups, split = gl_WorkGroupID.z / p.groups;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_b = grp * p.stride_b, base_c = split * p.split_stride + grp * p.stride_c;
  const uint k_begin = split * p.k_split, k_end = min(p.k, k_begin + p.k_split);
  const uint micro_cols = kTileN / kMicroN;
  const uint tm = (t / micro_cols) * kMicroM, tn = (t % micro_cols) * kMicroN;

  float acc[kMicroM][kMicroN];
  for (uint i = 0; i < kMicroM; ++i)
    for (uint j = 0; j < kMicroN; ++j) acc[i][j] = 0.0;

  for (uint k0 = k_begin; k0 < k_end; k0 += kTileK) {
    for (uint e = t; e < kTileK * kTileM; e += threads) {
      // The channel axis (k forward, the row filter-gradient) varies fastest.
      const uint kk = kPixelsAlongK ? e / kTileM : e % kTileK;
      const uint mm = kPixelsAlongK ? e % kTileM : e / kTileK;
      const uint row = row0 + mm, kg = k0 + kk;
      float v = 0.0;
      if (row < p.m && kg < k_end) v = kPixelsAlongK ? patch_value(kg, row, grp) : patch_value(row, kg, grp);
      tile_a[kk][mm] = v;
    }
    for (uint e = t; e < kTileK * kTileN; e += threads) {
      const uint kk = e / kTileN, nn = e % kTileN;
      const uint col = col0 + nn, kg = k0 + kk;
      float v = 0.0;
      if (col < p.cols && kg < k_end) v = load_b(base_b + kg * p.ldb + col);
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
      if (col >= p.cols) break;
      const uint at = base_c + row * p.ldc + col;
      store_c(at, epilogue(acc[i][j], row, col, at));
    }
  }
}
