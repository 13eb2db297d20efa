#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
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
// 16 x 16 accumulators (specialization constants 10-15: vkp::vk::GemmVariant's tilings).
// K is staged kTileK at a time in shared memory as float16, in runs of 8 (one uvec4:
// every shared access is 16 bytes), each operand laid out as it is stored (rows along
// its slow axis, runs along its contiguous one, so staging never transposes): a
// transposed operand is read into fragments column-major. Rows are padded by 8 halves,
// so the 8 rows a fragment load touches fall in different banks. Runs past the
// matrices' edges are zero-padded (any M, N and K work); a run is read with one 16-byte
// load (float16) or two (float32) where the operand's strides allow (kRunsA, kRunsB).
// The next step's runs are loaded into registers while the matrix units work on this
// one. Every loop over fragments is unrolled: the accumulators must stay in registers.
// The accumulators leave through a 16 x 16 scratch per subgroup, where the subgroup's
// invocations apply alpha, beta and the epilogue element by element and store only what
// lies inside C. That element loop too has a trip count known at specialization
// (256 / kSubgroupSize, the subgroup size being fixed where this kernel runs) and no
// `continue`: with a loop of runtime length inside the fragment loops, NVIDIA's driver
// (H100, 2026-11-27) left them rolled and kept the whole accumulator array in local
// memory, 32 bytes a lane per accumulator by its pipeline statistics, loading and
// storing each one around every product: 34.5 TFLOP/s at 4096^3 instead of 135.
// Launch: (ceil(N / kTileN), ceil(M / kTileM), batch); workgroup size kSubgroupsM *
// kSubgroupsN * kSubgroupSize. Push constants mirror vkp::vk::GemmTiledPush.
layout(local_size_x_id = 0) in;
layout(constant_id = 6) const bool kTransA = false;
layout(constant_id = 7) const bool kTransB = false;
// A (B) read a run of 8 at a time along its contiguous axis: its row stride and batch
// stride are multiples of 8 (float16) or 4 (float32) (vkp::vk::gemm decides).
layout(constant_id = 8) const bool kRunsA = false;
layout(constant_id = 9) const bool kRunsB = false;

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

// The operands 16 bytes at a time, in either width (f16_storage.glsl's mask).
layout(std430, binding = 0) readonly buffer A4 { vec4 a4[]; };
layout(std430, binding = 0) readonly buffer AU { uvec4 a_u[]; };
layout(std430, binding = 1) readonly buffer B4 { vec4 b4[]; };
layout(std430, binding = 1) readonly buffer BU { uvec4 b_u[]; };

const uint kFrag = 16;  // m, n and k of one matrix-unit product
layout(constant_id = 10) const uint kSubgroupsM = 2;
layout(constant_id = 11) const uint kSubgroupsN = 4;
layout(constant_id = 12) const uint kFragsM = 4;
layout(constant_id = 13) const uint kFragsN = 2;
layout(constant_id = 14) const uint kTileK = 32;  // a multiple of 16
layout(constant_id = 15) const uint kSubgroupSize = 32;
const uint kTileM = kSubgroupsM * kFragsM * kFrag, kTileN = kSubgroupsN * kFragsN * kFrag;
const uint kThreads = kSubgroupsM * kSubgroupsN * kSubgroupSize;
// Each operand's tile as stored: slow rows of fast halves, in runs of 8.
const uint kSlowA = kTransA ? kTileK : kTileM, kFastA = kTransA ? kTileM : kTileK;
const uint kSlowB = kTransB ? kTileN : kTileK, kFastB = kTransB ? kTileK : kTileN;
const uint kRowA = kFastA / 8 + 1, kRowB = kFastB / 8 + 1;  // uvec4s a shared row (one of padding)
const uint kRunsOfA = kSlowA * (kFastA / 8), kRunsOfB = kSlowB * (kFastB / 8);
const uint kLoadsA = (kRunsOfA + kThreads - 1) / kThreads, kLoadsB = (kRunsOfB + kThreads - 1) / kThreads;
shared uvec4 tile_a[kSlowA * kRowA];
shared uvec4 tile_b[kSlowB * kRowB];
shared float scratch[kSubgroupsM * kSubgroupsN * kFrag * kFrag];

#define Half16 fcoopmatNV<16, gl_ScopeSubgroup, kFrag, kFrag>
#define Float16x16 fcoopmatNV<32, gl_ScopeSubgroup, kFrag, kFrag>

uvec4 pack8(vec4 lo, vec4 hi) {
  return uvec4(packHalf2x16(lo.xy), packHalf2x16(lo.zw), packHalf2x16(hi.xy), packHalf2x16(hi.zw));
}

// The run of 8 halves of A (B) at element `at`, of which `valid` (0-8) lie inside the
// matrix; zeros past them.
uvec4 run_a(uint at, uint valid) {
  if (kRunsA && valid == 8) return VKP_F16_AT(0) ? a_u[at / 8] : pack8(a4[at / 4], a4[at / 4 + 1]);
  float v[8];
  [[unroll]] for (uint c = 0; c < 8; ++c) v[c] = c < valid ? load_a(at + c) : 0.0;
  return pack8(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]));
}
uvec4 run_b(uint at, uint valid) {
  if (kRunsB && valid == 8) return VKP_F16_AT(1) ? b_u[at / 8] : pack8(b4[at / 4], b4[at / 4 + 1]);
  float v[8];
  [[unroll]] for (uint c = 0; c < 8; ++c) v[c] = c < valid ? load_b(at + c) : 0.0;
  return pack8(vec4(v[0], v[1], v[2], v[3]), vec4(v[4], v[5], v[6], v[7]));
}

uint valid_of(uint slow, uint slow_extent, uint fast, uint fast_extent) {
  return slow < slow_extent && fast < fast_extent ? min(8u, fast_extent - fast) : 0u;
}

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint sg = gl_SubgroupID, sg_m = sg / kSubgroupsN, sg_n = sg % kSubgroupsN;
  const uint row0 = gl_WorkGroupID.y * kTileM, col0 = gl_WorkGroupID.x * kTileN;
  const uint base_a = gl_WorkGroupID.z * p.stride_a;
  const uint base_b = gl_WorkGroupID.z * p.stride_b;
  const uint base_c = gl_WorkGroupID.z * p.stride_c;
  const uint block_row = sg_m * kFragsM * kFrag, block_col = sg_n * kFragsN * kFrag;
  // The stored extents: A is m x k (k x m transposed), B k x n (n x k).
  const uint slow_a = kTransA ? p.k : p.m, fast_a = kTransA ? p.m : p.k;
  const uint slow_b = kTransB ? p.n : p.k, fast_b = kTransB ? p.k : p.n;

  Float16x16 acc[kFragsM][kFragsN];
  [[unroll]] for (uint i = 0; i < kFragsM; ++i)
    [[unroll]] for (uint j = 0; j < kFragsN; ++j) acc[i][j] = Float16x16(0.0);

  // Run r of a tile: shared row r / (kFast / 8), run r % (kFast / 8) of it.
  uvec4 next_a[kLoadsA], next_b[kLoadsB];
  for (uint k0 = 0;; k0 += kTileK) {
    // This step's runs: loaded in the previous trip (or here, the first time).
    if (k0 == 0) {
      [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
        const uint r = t + l * kThreads, sr = r / (kFastA / 8), fr = (r % (kFastA / 8)) * 8;
        const uint slow = (kTransA ? k0 : row0) + sr, fast = (kTransA ? row0 : k0) + fr;
        next_a[l] = r < kRunsOfA ? run_a(base_a + slow * p.lda + fast, valid_of(slow, slow_a, fast, fast_a)) : uvec4(0);
      }
      [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
        const uint r = t + l * kThreads, sr = r / (kFastB / 8), fr = (r % (kFastB / 8)) * 8;
        const uint slow = (kTransB ? col0 : k0) + sr, fast = (kTransB ? k0 : col0) + fr;
        next_b[l] = r < kRunsOfB ? run_b(base_b + slow * p.ldb + fast, valid_of(slow, slow_b, fast, fast_b)) : uvec4(0);
      }
    }
    [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
      const uint r = t + l * kThreads;
      if (r < kRunsOfA) tile_a[(r / (kFastA / 8)) * kRowA + r % (kFastA / 8)] = next_a[l];
    }
    [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
      const uint r = t + l * kThreads;
      if (r < kRunsOfB) tile_b[(r / (kFastB / 8)) * kRowB + r % (kFastB / 8)] = next_b[l];
    }
    barrier();
    const uint k1 = k0 + kTileK;
    if (k1 < p.k) {  // the next step's runs, in flight while the matrix units work
      [[unroll]] for (uint l = 0; l < kLoadsA; ++l) {
        const uint r = t + l * kThreads, sr = r / (kFastA / 8), fr = (r % (kFastA / 8)) * 8;
        const uint slow = (kTransA ? k1 : row0) + sr, fast = (kTransA ? row0 : k1) + fr;
        next_a[l] = r < kRunsOfA ? run_a(base_a + slow * p.lda + fast, valid_of(slow, slow_a, fast, fast_a)) : uvec4(0);
      }
      [[unroll]] for (uint l = 0; l < kLoadsB; ++l) {
        const uint r = t + l * kThreads, sr = r / (kFastB / 8), fr = (r % (kFastB / 8)) * 8;
        const uint slow = (kTransB ? col0 : k1) + sr, fast = (kTransB ? k1 : col0) + fr;
        next_b[l] = r < kRunsOfB ? run_b(base_b + slow * p.ldb + fast, valid_of(slow, slow_b, fast, fast_b)) : uvec4(0);
      }
    }
    [[unroll]] for (uint ks = 0; ks < kTileK; ks += kFrag) {
      // Offsets and strides in uvec4s: element (r, c) of op(A) at r * row + c (row-major) or
      // c * row + r (column-major, A transposed), 8 halves a uvec4. A's fragments are held
      // for the step; B's are loaded one at a time, each used kFragsM times at once, so
      // fewer registers hold operands while the accumulators keep theirs.
      Half16 fa[kFragsM];
      [[unroll]] for (uint i = 0; i < kFragsM; ++i) {
        const uint r = block_row + i * kFrag;
        coopMatLoadNV(fa[i], tile_a, kTransA ? ks * kRowA + r / 8 : r * kRowA + ks / 8, kRowA, kTransA);
      }
      [[unroll]] for (uint j = 0; j < kFragsN; ++j) {
        const uint c = block_col + j * kFrag;
        Half16 fb;
        coopMatLoadNV(fb, tile_b, kTransB ? c * kRowB + ks / 8 : ks * kRowB + c / 8, kRowB, kTransB);
        [[unroll]] for (uint i = 0; i < kFragsM; ++i) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
      }
    }
    barrier();
    if (k1 >= p.k) break;
  }

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
        if (row < p.m && col < p.n) {
          const uint at = base_c + row * p.ldc + col;
          const float s = scratch[own + e];
          const float v = p.beta == 0.0 ? p.alpha * s : p.alpha * s + p.beta * load_c(at);
          store_c(at, epilogue(v, row, col, at));
        }
      }
      subgroupBarrier();
    }
  }
}
