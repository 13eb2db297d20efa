#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// gemm_pack: copies the B operand of gemm_regblock into its zero-padded panel layout,
// which the GEMM then reads with aligned vec4 loads only (the CPU path; as in BLIS,
// packing costs O(N x K) and saves per-load work in the O(M x N x K) loop).
//
// The operand is seen as X[p][k], p along N, k along K; element (p, k) of batch b is at
// src[b * src_batch + p * stride_p + k * stride_k]. It is cut into panels of kWidth
// consecutive p and runs of 4 consecutive k (K padded to a multiple of 4); run
// r = panel * k_groups + g holds 4 rows of kWidth:
//   dst[b * dst_batch + r * 4 * kWidth + s * kWidth + i] = X[panel * kWidth + i][g * 4 + s]
// or 0 outside the operand.
//
// One invocation moves a 4 x 4 block (4 p by 4 k) and writes it as four vec4s: a CPU
// device runs invocations as SIMD lanes and pays per lane for each load, whatever its
// width, so whole vec4s are read where the source allows (kVector: 1 along p, 2 along
// k, with the host checking alignment) and a block that crosses the operand's edge
// falls back to checked scalar loads. A workgroup (kWidth / 4 invocations, one per
// block of a run) walks `chunk` consecutive runs of one panel, so that a long K is a
// few hundred workgroups rather than one per run (each costs about a microsecond on
// lavapipe). Launch: (ceil(k_groups / chunk), panels, batches). Push constants mirror
// vkp::vk::GemmPackPush.
layout(local_size_x_id = 0) in;  // kWidth / 4
layout(constant_id = 1) const uint kVector = 0;  // 0: scalar loads, 1: vec4 along p, 2: vec4 along k

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, Src, src)  // a texel buffer in the _texel build
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push {
  uint p_extent;   // rows of X (N)
  uint k_extent;   // K
  uint stride_p, stride_k;
  uint src_batch;  // elements between batches of src
  uint dst_batch;  // vec4s of one packed batch
  uint chunk;      // runs per workgroup
} p;

void main() {
  const uint blocks = gl_WorkGroupSize.x, q = gl_LocalInvocationID.x;
  const uint width4 = blocks;  // vec4s per packed row of kWidth floats
  const uint k_groups = (p.k_extent + 3) / 4;
  const uint p0 = gl_WorkGroupID.y * 4 * blocks + 4 * q;
  const uint src_base = gl_WorkGroupID.z * p.src_batch + p0 * p.stride_p;
  const uint dst_base = gl_WorkGroupID.z * p.dst_batch + gl_WorkGroupID.y * k_groups * 4 * width4 + q;
  const uint g_end = min(k_groups, (gl_WorkGroupID.x + 1) * p.chunk);
  const bool p_inside = p0 + 3 < p.p_extent;
  for (uint g = gl_WorkGroupID.x * p.chunk; g < g_end; ++g) {
    const uint k0 = 4 * g;
    vec4 rows[4];  // rows[s][e] = X[p0 + e][k0 + s]
    if (kVector != 0 && p_inside && k0 + 3 < p.k_extent) {
      const uint at = src_base + k0 * p.stride_k;
      if (kVector == 1) {
        for (uint s = 0; s < 4; ++s) rows[s] = load4_src((at + s * p.stride_k) / 4);
      } else {
        vec4 cols[4];
        for (uint e = 0; e < 4; ++e) cols[e] = load4_src((at + e * p.stride_p) / 4);
        for (uint s = 0; s < 4; ++s) rows[s] = vec4(cols[0][s], cols[1][s], cols[2][s], cols[3][s]);
      }
    } else {
      for (uint s = 0; s < 4; ++s)
        for (uint e = 0; e < 4; ++e) {
          rows[s][e] = 0.0;
          if (p0 + e < p.p_extent && k0 + s < p.k_extent) rows[s][e] = load_src(src_base + e * p.stride_p + (k0 + s) * p.stride_k);
        }
    }
    for (uint s = 0; s < 4; ++s) dst[dst_base + (4 * g + s) * width4] = rows[s];
  }
}
