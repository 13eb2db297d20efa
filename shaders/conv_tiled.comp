#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
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
// the partial sums afterwards). Each invocation loads the same elements of every A tile,
// kSlots of them, whose pixel (or tap) stays and whose tap (or pixel) moves on by kTileK
// from one tile to the next: both are kept decomposed in registers (Pixel, Tap), so the
// index map costs a few additions an element instead of seven integer divisions. The
// shared tiles' rows are padded by 4 words: rows stay 16-byte aligned (a block's row
// loads as a vec4) and the stores of a column spread over 8 banks. Launch: (ceil(n / kTileN), ceil(m / kTileM), groups *
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

shared float tile_a[kTileK][kTileM + 4];
shared float tile_b[kTileK][kTileN + 4];

const uint kThreads = (kTileM / kMicroM) * (kTileN / kMicroN);  // the workgroup's size
const uint kSlots = (kTileK * kTileM + kThreads - 1) / kThreads;  // A elements an invocation loads a tile

// An output pixel (image b, row y, column x) and a patch column (tap row i, tap column
// j, channel ch of the group), decomposed once and then moved on by additions.
struct Pixel {
  uint b, y, x;
};
struct Tap {
  uint i, j, ch;
};
Pixel pixel_at(uint q) {
  const uint x = q % p.ow, rest = q / p.ow;
  return Pixel(rest / p.oh, rest % p.oh, x);
}
Tap tap_at(uint kk, uint cg) {
  const uint tap = kk / cg;
  return Tap(tap / p.kw, tap % p.kw, kk - tap * cg);
}
void advance(inout Pixel q, uint by) {
  q.x += by;
  while (q.x >= p.ow) {
    q.x -= p.ow;
    if (++q.y == p.oh) {
      q.y = 0;
      ++q.b;
    }
  }
}
void advance(inout Tap q, uint by, uint cg) {
  q.ch += by;
  while (q.ch >= cg) {
    q.ch -= cg;
    if (++q.j == p.kw) {
      q.j = 0;
      ++q.i;
    }
  }
}
float patch_value(Pixel q, Tap tap, uint cg, uint grp) {
  const int y = int(q.y * p.stride_h) + int(tap.i) * p.dilation_h - p.pad_top;
  const int xx = int(q.x * p.stride_w) + int(tap.j) * p.dilation_w - p.pad_left;
  float v = 0.0;
  if (y >= 0 && y < int(p.h) && xx >= 0 && xx < int(p.w))
    v = load_x(((q.b * p.h + uint(y)) * p.w + uint(xx)) * p.ch + grp * cg + tap.ch);
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

  const uint cg = p.ch / p.groups;

  float acc[kMicroM][kMicroN];
  [[unroll]] for (uint i = 0; i < kMicroM; ++i)
    [[unroll]] for (uint j = 0; j < kMicroN; ++j) acc[i][j] = 0.0;

  // Slot s holds A's element e = t + s * kThreads of each tile: tile row mm, tile column
  // kk (the channel axis, k forward and the row for the filter gradient, varies fastest),
  // at the pixel and tap that row + mm and k0 + kk stand for.
  Pixel pixel[kSlots];
  Tap tap[kSlots];
  [[unroll]] for (uint s = 0; s < kSlots; ++s) {
    const uint e = t + s * kThreads;
    const uint kk = kPixelsAlongK ? e / kTileM : e % kTileK;
    const uint mm = kPixelsAlongK ? e % kTileM : e / kTileK;
    pixel[s] = pixel_at(kPixelsAlongK ? k_begin + kk : row0 + mm);
    tap[s] = tap_at(kPixelsAlongK ? row0 + mm : k_begin + kk, cg);
  }

  for (uint k0 = k_begin; k0 < k_end; k0 += kTileK) {
    [[unroll]] for (uint s = 0; s < kSlots; ++s) {
      const uint e = t + s * kThreads;
      if (e >= kTileK * kTileM) break;
      const uint kk = kPixelsAlongK ? e / kTileM : e % kTileK;
      const uint mm = kPixelsAlongK ? e % kTileM : e / kTileK;
      const uint row = row0 + mm, kg = k0 + kk;
      float v = 0.0;
      if (row < p.m && kg < k_end) v = patch_value(pixel[s], tap[s], cg, grp);
      tile_a[kk][mm] = v;
      if (kPixelsAlongK) advance(pixel[s], kTileK);
      else advance(tap[s], kTileK, cg);
    }
    for (uint e = t; e < kTileK * kTileN; e += threads) {
      const uint kk = e / kTileN, nn = e % kTileN;
      const uint col = col0 + nn, kg = k0 + kk;
      float v = 0.0;
      if (col < p.cols && kg < k_end) v = load_b(base_b + kg * p.ldb + col);
      tile_b[kk][nn] = v;
    }
    barrier();
    [[unroll]] for (uint kk = 0; kk < kTileK; ++kk) {
      float av[kMicroM], bv[kMicroN];
      [[unroll]] for (uint i = 0; i < kMicroM; ++i) av[i] = tile_a[kk][tm + i];
      [[unroll]] for (uint j = 0; j < kMicroN; ++j) bv[j] = tile_b[kk][tn + j];
      [[unroll]] for (uint i = 0; i < kMicroM; ++i)
        [[unroll]] for (uint j = 0; j < kMicroN; ++j) acc[i][j] = fma(av[i], bv[j], acc[i][j]);
    }
    barrier();
  }

  [[unroll]] for (uint i = 0; i < kMicroM; ++i) {
    const uint row = row0 + tm + i;
    if (row >= p.m) break;
    [[unroll]] for (uint j = 0; j < kMicroN; ++j) {
      const uint col = col0 + tn + j;
      if (col >= p.cols) break;
      const uint at = base_c + row * p.ldc + col;
      store_c(at, epilogue(acc[i][j], row, col, at));
    }
  }
}
