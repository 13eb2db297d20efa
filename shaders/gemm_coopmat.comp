#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
#define VKP_F16 1
// gemm_coopmat: C = alpha * op(A) * op(B) + beta * C, strided-batched, as gemm_tiled,
// with the products on the device's matrix units (VK_NV_cooperative_matrix): operands
// rounded to float16, sums kept in float32. Every binding may hold float32 or float16
// (f16_storage.glsl).
//
// A workgroup of kSubgroupsM x kSubgroupsN subgroups computes a kTileM x kTileN tile of
// C; each subgroup a (kFragsM x 16) x (kFragsN x 16) block of it, as kFragsM x kFragsN
// 16 x 16 accumulators. K is staged kTileK at a time in shared memory, as float16,
// zero-padded past the matrices' edges (so any M, N and K work), read 4 elements at a
// time along each operand's contiguous axis where its strides allow; each 16 of K is then
// one matrix-unit product per accumulator. The accumulators leave through a 16 x 16
// scratch per subgroup, where the subgroup's invocations apply alpha, beta and the
// epilogue element by element and store only what lies inside C.
// Launch: (ceil(N / kTileN), ceil(M / kTileM), batch); workgroup size kSubgroupsM *
// kSubgroupsN times the subgroup size. Push constants mirror vkp::vk::GemmTiledPush.
layout(local_size_x_id = 0) in;
layout(constant_id = 6) const bool kTransA = false;
layout(constant_id = 7) const bool kTransB = false;
// A (B) read 4 elements at a time along its contiguous axis: its row stride and batch
// stride are multiples of 4 (vkp::vk::gemm decides).
layout(constant_id = 8) const bool kVec4A = false;
layout(constant_id = 9) const bool kVec4B = false;

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

// The operands as runs of 4, in either width (f16_storage.glsl's mask).
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 0) readonly buffer AH4 { f16vec4 a_h4[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 1) readonly buffer BH4 { f16vec4 b_h4[]; };
f16vec4 load4h_a(uint i) { return VKP_F16_AT(0) ? a_h4[i] : f16vec4(a4[i]); }
f16vec4 load4h_b(uint i) { return VKP_F16_AT(1) ? b_h4[i] : f16vec4(b4[i]); }

const uint kFrag = 16;  // m, n and k of one matrix-unit product
const uint kSubgroupsM = 2, kSubgroupsN = 4, kFragsM = 4, kFragsN = 2;
const uint kTileM = kSubgroupsM * kFragsM * kFrag, kTileN = kSubgroupsN * kFragsN * kFrag, kTileK = 32;
// Shared rows in halves, padded by 8 (16 bytes) so that rows start on different banks.
const uint kStrideA = kTileK + 8, kStrideB = kTileN + 8;
shared float16_t tile_a[kTileM * kStrideA];  // op(A)[m][k] at m * kStrideA + k
shared float16_t tile_b[kTileK * kStrideB];  // op(B)[k][n] at k * kStrideB + n
shared float scratch[kSubgroupsM * kSubgroupsN * kFrag * kFrag];

#define Half16 fcoopmatNV<16, gl_ScopeSubgroup, kFrag, kFrag>
#define Float16x16 fcoopmatNV<32, gl_ScopeSubgroup, kFrag, kFrag>

void main() {
  const uint threads = gl_WorkGroupSize.x;
  const uint t = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, sg_m = sg / kSubgroupsN, sg_n = sg % kSubgroupsN;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_a = gl_WorkGroupID.z * p.stride_a;
  const uint base_b = gl_WorkGroupID.z * p.stride_b;
  const uint base_c = gl_WorkGroupID.z * p.stride_c;
  const uint block_row = sg_m * kFragsM * kFrag, block_col = sg_n * kFragsN * kFrag;

  Float16x16 acc[kFragsM][kFragsN];
  for (uint i = 0; i < kFragsM; ++i)
    for (uint j = 0; j < kFragsN; ++j) acc[i][j] = Float16x16(0.0);

  for (uint k0 = 0; k0 < p.k; k0 += kTileK) {
    if (kVec4A) {
      // Runs of 4 along A's contiguous axis: k, or m when transposed.
      for (uint e = t; e < kTileK * kTileM / 4; e += threads) {
        const uint kk = kTransA ? e / (kTileM / 4) : (e % (kTileK / 4)) * 4;
        const uint mm = kTransA ? (e % (kTileM / 4)) * 4 : e / (kTileK / 4);
        const uint row = row0 + mm, kg = k0 + kk;
        const uint at = base_a + (kTransA ? kg * p.lda + row : row * p.lda + kg);
        f16vec4 v = f16vec4(0.0);
        if (kTransA ? (kg < p.k && row + 3 < p.m) : (row < p.m && kg + 3 < p.k)) {
          v = load4h_a(at / 4);
        } else {
          for (uint c = 0; c < 4; ++c)
            if (kTransA ? (kg < p.k && row + c < p.m) : (row < p.m && kg + c < p.k)) v[c] = float16_t(load_a(at + c));
        }
        for (uint c = 0; c < 4; ++c) tile_a[kTransA ? (mm + c) * kStrideA + kk : mm * kStrideA + kk + c] = v[c];
      }
    } else {
      for (uint e = t; e < kTileK * kTileM; e += threads) {
        // Consecutive invocations take consecutive addresses of A.
        const uint kk = kTransA ? e / kTileM : e % kTileK;
        const uint mm = kTransA ? e % kTileM : e / kTileK;
        const uint row = row0 + mm, kg = k0 + kk;
        float v = 0.0;
        if (row < p.m && kg < p.k) v = load_a(base_a + (kTransA ? kg * p.lda + row : row * p.lda + kg));
        tile_a[mm * kStrideA + kk] = float16_t(v);
      }
    }
    if (kVec4B) {
      // Runs of 4 along B's contiguous axis: n, or k when transposed.
      for (uint e = t; e < kTileK * kTileN / 4; e += threads) {
        const uint kk = kTransB ? (e % (kTileK / 4)) * 4 : e / (kTileN / 4);
        const uint nn = kTransB ? e / (kTileK / 4) : (e % (kTileN / 4)) * 4;
        const uint col = col0 + nn, kg = k0 + kk;
        const uint at = base_b + (kTransB ? col * p.ldb + kg : kg * p.ldb + col);
        f16vec4 v = f16vec4(0.0);
        if (kTransB ? (col < p.n && kg + 3 < p.k) : (kg < p.k && col + 3 < p.n)) {
          v = load4h_b(at / 4);
        } else {
          for (uint c = 0; c < 4; ++c)
            if (kTransB ? (col < p.n && kg + c < p.k) : (kg < p.k && col + c < p.n)) v[c] = float16_t(load_b(at + c));
        }
        for (uint c = 0; c < 4; ++c) tile_b[kTransB ? (kk + c) * kStrideB + nn : kk * kStrideB + nn + c] = v[c];
      }
    } else {
      for (uint e = t; e < kTileK * kTileN; e += threads) {
        const uint kk = kTransB ? e % kTileK : e / kTileN;
        const uint nn = kTransB ? e / kTileK : e % kTileN;
        const uint col = col0 + nn, kg = k0 + kk;
        float v = 0.0;
        if (col < p.n && kg < p.k) v = load_b(base_b + (kTransB ? col * p.ldb + kg : kg * p.ldb + col));
        tile_b[kk * kStrideB + nn] = float16_t(v);
      }
    }
    barrier();
    for (uint ks = 0; ks < kTileK; ks += kFrag) {
      Half16 fa[kFragsM], fb[kFragsN];
      for (uint i = 0; i < kFragsM; ++i)
        coopMatLoadNV(fa[i], tile_a, (block_row + i * kFrag) * kStrideA + ks, kStrideA, false);
      for (uint j = 0; j < kFragsN; ++j)
        coopMatLoadNV(fb[j], tile_b, ks * kStrideB + block_col + j * kFrag, kStrideB, false);
      for (uint i = 0; i < kFragsM; ++i)
        for (uint j = 0; j < kFragsN; ++j) acc[i][j] = coopMatMulAddNV(fa[i], fb[j], acc[i][j]);
    }
    barrier();
  }

  const uint own = sg * kFrag * kFrag;
  for (uint i = 0; i < kFragsM; ++i) {
    for (uint j = 0; j < kFragsN; ++j) {
      coopMatStoreNV(acc[i][j], scratch, own, kFrag, false);
      subgroupMemoryBarrierShared();
      subgroupBarrier();
      for (uint e = gl_SubgroupInvocationID; e < kFrag * kFrag; e += gl_SubgroupSize) {
        const uint row = row0 + block_row + i * kFrag + e / kFrag;
        const uint col = col0 + block_col + j * kFrag + e % kFrag;
        if (row >= p.m || col >= p.n) continue;
        const uint at = base_c + row * p.ldc + col;
        const float s = scratch[own + e];
        const float v = p.beta == 0.0 ? p.alpha * s : p.alpha * s + p.beta * load_c(at);
        store_c(at, epilogue(v, row, col, at));
      }
      subgroupBarrier();
    }
  }
}
