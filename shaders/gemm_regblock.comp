#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// gemm_regblock: C = alpha * op(A) * op(B) + beta * C, with op(B) packed by gemm_pack or,
// where its layout allows, read in place (kBMode); the path for CPU devices (lavapipe).
// f32 accumulation; A, B and C may be float16 (f16_storage.glsl).
//
// A CPU device runs a workgroup as one thread whose SIMD lanes are invocations. A
// storage-buffer load is a loop over the lanes (even where every lane reads the same
// address: lavapipe did not make these loads of A scalar), a texel fetch one gather.
// So in the _texel build both A and B are texel buffers (at 1024^3 on lavapipe, reading
// A through one took the product from 244 to 42 ms), and:
//   - rows of C belong to the workgroup: op(A) is read in place, the same element in
//     every lane, 4 scalars for 4 steps of k (any strides, transposed or not) or, where
//     its rows run along k and start 16-byte aligned (kAVec4), one vec4;
//   - columns belong to lanes, 4 at a time: packed B is read with aligned vec4 loads,
//     4 x kCols per lane per 4 steps of k, feeding kRows x kCols x 16 FMAs held in
//     registers.
// Packing made B's loads aligned and in bounds, its K a multiple of 4 and its padding 0.
// Read in place, the same vec4s come from B's own rows (kBMode 1: op(B) row-major, a
// lane's 4 columns one vec4) or columns (kBMode 2: op(B) column-major, 4 steps of k of
// one column one vec4, transposed in registers, which on a CPU device's SIMD lanes is
// only a renaming); columns past N read column N - 1 (or N - 4) and are not stored,
// rows past K are zeros. That saves the packing pass, a third of the time of a product
// with few rows of C and a long K.
//
//   op(A)[r][k] at a[batch * stride_a + r * a_row + k * a_k]
//   packed B: [batch][panel of kWidth = lanes * 4 * kCols columns][K padded][kWidth]
//   B in place: element (k, n) of batch b at vec4 b_offset + b * b_batch, then
//     mode 1: + k * b_ld + n / 4 (N a multiple of 4); mode 2: + n * b_ld + k / 4
//   C: M x N, element (r, c) at r * c_row + c * c_col, batch stride stride_c (elements);
//      c_col != 1 lets the host run C^T = op(B)^T op(A)^T when that blocks better.
// Launch: (ceil(N / kWidth), ceil(M / kRows), batch). Push constants mirror
// vkp::vk::GemmRegblockPush.
layout(local_size_x_id = 0) in;  // lanes
layout(constant_id = 1) const uint kRows = 16;
layout(constant_id = 2) const uint kCols = 4;
layout(constant_id = 3) const bool kAVec4 = false;  // op(A)'s rows are contiguous and 16-byte aligned
layout(constant_id = 4) const uint kBMode = 0;       // 0: packed; 1, 2: in place (above)
// beta != 0: C is read. A spec constant, not a test of p.beta, because a CPU device runs
// both sides of a branch under a mask, and a masked load is still a loop over the lanes.
layout(constant_id = 5) const bool kReadC = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, A, a)  // both texel buffers in the _texel build
VKP_TEXEL_INPUT4(1, B, b)
VKP_INOUT(2, C, c)
layout(push_constant) uniform Push {
  uint m, n, k;
  uint a_row, a_k;    // element strides of op(A) along rows and along k
  uint stride_a;      // elements between batches of A (0: one A for all)
  uint b_batch;       // vec4s between packed batches of B (0: one B for all)
  uint c_row, c_col, stride_c;
  float alpha, beta;
  uint a_offset, c_offset;  // elements before op(A) and C
  uint bias_row, bias_col;  // the epilogue's (epilogue.glsl)
  float act_alpha, gate_alpha;
  uint b_ld, b_offset;      // B in place: in vec4s
} p;

#include "epilogue.glsl"

// B's reads: the packed run or, in place, where this lane's columns start.
uint packed_at;
uint b_at[kCols][4];

// bv[s][j]: this lane's j-th vec4 of columns at k = 4 g + s; `whole`: 4 g + 3 < K.
void read_b(uint g, bool whole, out vec4 bv[4][kCols]) {
  const uint lanes = gl_WorkGroupSize.x, width4 = lanes * kCols;
  for (uint j = 0; j < kCols; ++j) {
    if (kBMode == 0) {
      for (uint s = 0; s < 4; ++s) bv[s][j] = load4_b(packed_at + (4 * g + s) * width4 + j * lanes);
    } else if (kBMode == 1) {
      for (uint s = 0; s < 4; ++s)
        bv[s][j] = whole || 4 * g + s < p.k ? load4_b(b_at[j][0] + (4 * g + s) * p.b_ld) : vec4(0.0);
    } else if (whole) {
      vec4 cols[4];  // cols[e][s]: column e at k = 4 g + s
      for (uint e = 0; e < 4; ++e) cols[e] = load4_b(b_at[j][e] + g);
      for (uint s = 0; s < 4; ++s) bv[s][j] = vec4(cols[0][s], cols[1][s], cols[2][s], cols[3][s]);
    } else {
      for (uint s = 0; s < 4; ++s)
        for (uint e = 0; e < 4; ++e) bv[s][j][e] = 4 * g + s < p.k ? load_b(4 * (b_at[j][e] + g) + s) : 0.0;
    }
  }
}

void main() {
  const uint lanes = gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  const uint width4 = lanes * kCols;  // vec4s per packed row of B
  const uint k_groups = (p.k + 3) / 4;  // of the packed B
  const uint row0 = gl_WorkGroupID.y * kRows;
  const uint col0 = gl_WorkGroupID.x * width4 * 4;
  packed_at = gl_WorkGroupID.z * p.b_batch + gl_WorkGroupID.x * k_groups * 4 * width4 + lane;
  for (uint j = 0; j < kCols; ++j) {
    const uint col = col0 + (j * lanes + lane) * 4;
    for (uint e = 0; e < 4; ++e)
      b_at[j][e] = p.b_offset + gl_WorkGroupID.z * p.b_batch +
                   (kBMode == 1 ? min(col, p.n - 4) / 4 : min(col + e, p.n - 1) * p.b_ld);
  }
  // Rows past M read row M-1 and are not stored.
  uint at_a[kRows];
  for (uint i = 0; i < kRows; ++i) at_a[i] = p.a_offset + gl_WorkGroupID.z * p.stride_a + min(row0 + i, p.m - 1) * p.a_row;

  vec4 acc[kRows][kCols];
  for (uint i = 0; i < kRows; ++i)
    for (uint j = 0; j < kCols; ++j) acc[i][j] = vec4(0.0);

  // Full groups of 4 k: every load unconditional, so uniform loads stay scalar.
  const uint full_groups = p.k / 4;
  for (uint g = 0; g < full_groups; ++g) {
    vec4 bv[4][kCols];
    read_b(g, true, bv);
    for (uint i = 0; i < kRows; ++i) {
      const uint at = at_a[i] + 4 * g * p.a_k;
      const vec4 av = kAVec4 ? load4_a(at / 4)
                              : vec4(load_a(at), load_a(at + p.a_k), load_a(at + 2 * p.a_k), load_a(at + 3 * p.a_k));
      for (uint j = 0; j < kCols; ++j)
        acc[i][j] += av.x * bv[0][j] + av.y * bv[1][j] + av.z * bv[2][j] + av.w * bv[3][j];
    }
  }
  // The last, partial group: B is 0 past K, but A must not be read there (out of
  // bounds, or inf * 0).
  if (full_groups < k_groups) {
    vec4 bv[4][kCols];
    read_b(full_groups, false, bv);
    const uint k0 = 4 * full_groups;
    for (uint i = 0; i < kRows; ++i) {
      const uint at = at_a[i] + k0 * p.a_k;
      const vec4 av = vec4(load_a(at), k0 + 1 < p.k ? load_a(at + p.a_k) : 0.0, k0 + 2 < p.k ? load_a(at + 2 * p.a_k) : 0.0, 0.0);
      for (uint j = 0; j < kCols; ++j)
        acc[i][j] += av.x * bv[0][j] + av.y * bv[1][j] + av.z * bv[2][j] + av.w * bv[3][j];
    }
  }

  const uint base_c = p.c_offset + gl_WorkGroupID.z * p.stride_c;
  for (uint i = 0; i < kRows; ++i) {
    const uint row = row0 + i;
    if (row >= p.m) break;
    for (uint j = 0; j < kCols; ++j) {
      const uint col = col0 + (j * lanes + lane) * 4;
      for (uint e = 0; e < 4; ++e) {
        if (col + e >= p.n) break;
        const uint at = base_c + row * p.c_row + (col + e) * p.c_col;
        // beta == 0 never reads C: it may hold NaN from an earlier use of the memory.
        const float v = kReadC ? p.alpha * acc[i][j][e] + p.beta * load_c(at) : p.alpha * acc[i][j][e];
        store_c(at, epilogue(v, row, col + e, at));
      }
    }
  }
}
