#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
#define VKP_F16 1
// conv_coopmat: implicit-GEMM convolution on the device's matrix units
// (VK_NV_cooperative_matrix): conv_tiled's products (its header gives A, B, C, the
// groups and the splits of K) in gemm_coopmat's tiling (its header gives the subgroups,
// fragments, the shared tiles of float16 runs and the epilogue through a scratch).
// Operands are rounded to float16, sums kept in float32; vkp::vk::implicit_conv runs it
// only where both already hold float16, so the products are exact.
//
// The patch matrix P is staged as gemm_coopmat stages an operand, in runs of 8 patch
// columns kk of one pixel (one tap's consecutive channels where a group's channels come
// in eights): forward (kPixelsAlongK false) A = P, its tile rows the pixels; filter
// gradient A = P^T, read as gemm_coopmat reads a transposed A, its tile rows the pixels
// too. Either way a run's pixel is the slow axis and its kk the fast one. Each
// invocation loads the same runs of every tile; a run's pixel (forward) or kk (filter
// gradient) stays and the other moves on by kTileK, both kept decomposed (Pixel, Tap)
// and advanced by additions, as conv_tiled does. With kRunsP a whole run is one 16-byte
// load (float16) or two (float32); otherwise, and at the edges, element by element.
// Launch: (ceil(cols / kTileN), ceil(m / kTileM), groups * splits); workgroup
// kSubgroupsM * kSubgroupsN * kSubgroupSize. Push constants mirror vkp::vk::ConvTiledPush.
layout(local_size_x_id = 0) in;
layout(constant_id = 6) const bool kPixelsAlongK = false;
// A run of 8 patch columns is 8 channels of one tap at an address divisible by 8: the
// image's channels and a group's are multiples of 8.
layout(constant_id = 7) const bool kRunsP = false;
// B read a run of 8 at a time along its columns: ldb and stride_b multiples of 8
// (float16) or 4 (float32).
layout(constant_id = 8) const bool kRunsB = false;

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

layout(std430, binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 0) readonly buffer XU { uvec4 x_u[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 1) readonly buffer BU { uvec4 b_u[]; };

const uint kFrag = 16;
layout(constant_id = 10) const uint kSubgroupsM = 4;
layout(constant_id = 11) const uint kSubgroupsN = 1;
layout(constant_id = 12) const uint kFragsM = 2;
layout(constant_id = 13) const uint kFragsN = 2;
layout(constant_id = 14) const uint kTileK = 32;  // a multiple of 16
layout(constant_id = 15) const uint kSubgroupSize = 32;
const uint kTileM = kSubgroupsM * kFragsM * kFrag, kTileN = kSubgroupsN * kFragsN * kFrag;
const uint kThreads = kSubgroupsM * kSubgroupsN * kSubgroupSize;
// A's tile as staged: rows of pixels, runs of 8 patch columns along them.
const uint kSlowA = kPixelsAlongK ? kTileK : kTileM, kFastA = kPixelsAlongK ? kTileM : kTileK;
const uint kRowA = kFastA / 8 + 1, kRowB = kTileN / 8 + 1;  // uvec4s a shared row (one of padding)
const uint kRunsOfA = kSlowA * (kFastA / 8), kRunsOfB = kTileK * (kTileN / 8);
const uint kLoadsA = (kRunsOfA + kThreads - 1) / kThreads, kLoadsB = (kRunsOfB + kThreads - 1) / kThreads;
shared uvec4 tile_a[kSlowA * kRowA];
shared uvec4 tile_b[kTileK * kRowB];
shared float scratch[kSubgroupsM * kSubgroupsN * kFrag * kFrag];

#define Half16 fcoopmatNV<16, gl_ScopeSubgroup, kFrag, kFrag>
#define Float16x16 fcoopmatNV<32, gl_ScopeSubgroup, kFrag, kFrag>

uvec4 pack8(vec4 lo, vec4 hi) {
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

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
// The image element of `tap` at pixel `q`: its index, or -1 where the tap is padding.
int image_at(Pixel q, Tap tap, uint cg, uint grp) {
  const int y = int(q.y * p.stride_h) + int(tap.i) * p.dilation_h - p.pad_top;
  const int xx = int(q.x * p.stride_w) + int(tap.j) * p.dilation_w - p.pad_left;
  if (y < 0 || y >= int(p.h) || xx < 0 || xx >= int(p.w)) return -1;
  return int(((q.b * p.h + uint(y)) * p.w + uint(xx)) * p.ch + grp * cg + tap.ch);
}

// The run of P at pixel q and patch columns from `tap` on, of which `valid` (0-8) lie
// inside the matrix; zeros past them and in the padding.
uvec4 run_p(Pixel q, Tap tap, uint valid, uint cg, uint grp) {
  if (kRunsP && valid == 8) {
    const int at = image_at(q, tap, cg, grp);
    if (at < 0) return uvec4(0);
    return VKP_F16_AT(0) ? x_u[at / 8] : pack8(x4[at / 4], x4[at / 4 + 1]);
  }
  float v[8];
  Tap t = tap;
  [[unroll]] for (uint c = 0; c < 8; ++c) {
    const int at = c < valid ? image_at(q, t, cg, grp) : -1;
    v[c] = at < 0 ? 0.0 : load_x(uint(at));
    advance(t, 1, cg);
  }
  return pack8(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]));
}

uvec4 run_b(uint at, uint valid) {
  if (kRunsB && valid == 8) return VKP_F16_AT(1) ? b_u[at / 8] : pack8(b4[at / 4], b4[at / 4 + 1]);
  float v[8];
  [[unroll]] for (uint c = 0; c < 8; ++c) v[c] = c < valid ? load_b(at + c) : 0.0;
  return pack8(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]));
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, sg_m = sg / kSubgroupsN, sg_n = sg % kSubgroupsN;
  const uint grp = gl_WorkGroupID.z % p.groups, split = gl_WorkGroupID.z / p.groups;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_b = grp * p.stride_b, base_c = split * p.split_stride + grp * p.stride_c;
  const uint k_begin = split * p.k_split, k_end = min(p.k, k_begin + p.k_split);
  const uint block_row = sg_m * kFragsM * kFrag, block_col = sg_n * kFragsN * kFrag;
  const uint cg = p.ch / p.groups;
  // P's extents: pixels (rows of the staged tile) and patch columns (along them).
  const uint pixel_end = kPixelsAlongK ? k_end : p.m, column_end = kPixelsAlongK ? p.m : p.k;

  Float16x16 acc[kFragsM][kFragsN];
  [[unroll]] for (uint i = 0; i < kFragsM; ++i)
    [[unroll]] for (uint j = 0; j < kFragsN; ++j) acc[i][j] = Float16x16(0.0);

  // Load slot l holds run r = t + l * kThreads of every A tile: tile row r / (kFastA / 8),
  // its pixel, and columns from (r % (kFastA / 8)) * 8 on, its tap.
  Pixel pixel[kLoadsA];
  Tap tap[kLoadsA];
  uint pixel_index[kLoadsA], column[kLoadsA];
  [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
    const uint r = t + l * kThreads, sr = r / (kFastA / 8), fr = (r % (kFastA / 8)) * 8;
    pixel_index[l] = (kPixelsAlongK ? k_begin : row0) + sr;
    column[l] = (kPixelsAlongK ? row0 : k_begin) + fr;
    pixel[l] = pixel_at(pixel_index[l]);
    tap[l] = tap_at(column[l], cg);
  }

  uvec4 next_a[kLoadsA], next_b[kLoadsB];
  for (uint k0 = k_begin;; k0 += kTileK) {
    if (k0 == k_begin) {
      [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
        const uint r = t + l * kThreads;
        const bool inside = r < kRunsOfA && pixel_index[l] < pixel_end && column[l] < column_end;
        next_a[l] = inside ? run_p(pixel[l], tap[l], min(8u, column_end - column[l]), cg, grp) : uvec4(0);
      }
      [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
        const uint r = t + l * kThreads, kg = k0 + r / (kTileN / 8), col = col0 + (r % (kTileN / 8)) * 8;
        const bool inside = r < kRunsOfB && kg < k_end && col < p.cols;
        next_b[l] = inside ? run_b(base_b + kg * p.ldb + col, min(8u, p.cols - col)) : uvec4(0);
      }
    }
    [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
      const uint r = t + l * kThreads;
      if (r < kRunsOfA) tile_a[(r / (kFastA / 8)) * kRowA + r % (kFastA / 8)] = next_a[l];
    }
    [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
      const uint r = t + l * kThreads;
      if (r < kRunsOfB) tile_b[(r / (kTileN / 8)) * kRowB + r % (kTileN / 8)] = next_b[l];
    }
    barrier();
    const uint k1 = k0 + kTileK;
    if (k1 < k_end) {  // the next step's runs, in flight while the matrix units work
      [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
        if (kPixelsAlongK) {
          advance(pixel[l], kTileK);
          pixel_index[l] += kTileK;
        } else {
          advance(tap[l], kTileK, cg);
          column[l] += kTileK;
        }
        const uint r = t + l * kThreads;
        const bool inside = r < kRunsOfA && pixel_index[l] < pixel_end && column[l] < column_end;
        next_a[l] = inside ? run_p(pixel[l], tap[l], min(8u, column_end - column[l]), cg, grp) : uvec4(0);
      }
      [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
        const uint r = t + l * kThreads, kg = k1 + r / (kTileN / 8), col = col0 + (r % (kTileN / 8)) * 8;
        const bool inside = r < kRunsOfB && kg < k_end && col < p.cols;
        next_b[l] = inside ? run_b(base_b + kg * p.ldb + col, min(8u, p.cols - col)) : uvec4(0);
      }
    }
    [[unroll]] for (uint ks = 0; ks < kTileK; ks += kFrag) {
      // A's element (r, k) at r * kRowA + k / 8 (forward) or k * kRowA + r / 8 (the filter
      // gradient's P^T, read column-major), in uvec4s.
      Half16 fa[kFragsM];
      [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
        const uint r = block_row + i * kFrag;
        coopMatLoadNV(fa[i], tile_a, kPixelsAlongK ? ks * kRowA + r / 8 : r * kRowA + ks / 8, kRowA, kPixelsAlongK);
      }
      [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
        Half16 fb;
        coopMatLoadNV(fb, tile_b, ks * kRowB + (block_col + j * kFrag) / 8, kRowB, false);
        [[unroll]] for (uint i = 0; i < kFragsM; ++i) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
      }
    }
    barrier();
    if (k1 >= k_end) break;
  }

  // Out through a 16 x 16 scratch per subgroup, with gemm_coopmat's fixed trip count.
  const uint own = sg * kFrag * kFrag;
  [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
    [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
      coopMatStoreNV(acc[i][j], scratch, own, kFrag, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      [[unroll]] for (uint q = 0; q < kFrag * kFrag / kSubgroupSize; ++q) {
        const uint e = q * kSubgroupSize + gl_SubgroupInvocationID;
        const uint row = row0 + block_row + i * kFrag + e / kFrag;
        const uint col = col0 + block_col + j * kFrag + e % kFrag;
        if (row < p.m && col < p.cols) {
          const uint at = base_c + row * p.ldc + col;
          store_c(at, epilogue(scratch[own + e], row, col, at));
        }
      }
      subgroupBarrier();
    }
  }
}
