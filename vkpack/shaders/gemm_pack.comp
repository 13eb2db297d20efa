#version 450
// gemm_pack: copies one operand of a GEMM into the zero-padded panel layout that
// gemm_regblock reads with aligned vec4 loads only (the CPU path; as in BLIS, packing
// costs O(rows x K) and saves per-load work in the O(M x N x K) loop).
//
// The operand is seen as X[p][k]: p runs along M (for A) or N (for B), k along K;
// element (p, k) of batch b is at src[b * src_batch + p * stride_p + k * stride_k].
// It is cut into panels of kWidth consecutive p and runs of 4 consecutive k (K padded
// to a multiple of 4); run r = panel * k_groups + g holds 4 * kWidth floats:
//   A (kKMajor false): dst[r * 4 * kWidth + i * 4 + s]       a vec4 along k per row
//   B (kKMajor true):  dst[r * 4 * kWidth + s * kWidth + i]  rows of kWidth columns
// = X[panel * kWidth + i][g * 4 + s], or 0 outside the operand.
// A workgroup writes runs of one panel, walking along k so that consecutive workgroups
// read neighbouring memory. Launch: (min(k_groups, limit), panels, batches), workgroup
// 4 * kWidth. Push constants mirror vkp::vk::GemmPackPush.
layout(local_size_x_id = 0) in;  // 4 * kWidth
layout(constant_id = 1) const bool kKMajor = false;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) writeonly buffer Dst { float dst[]; };
layout(push_constant) uniform Push {
  uint p_extent;   // rows of X (M or N)
  uint k_extent;   // K
  uint stride_p, stride_k;
  uint src_batch;  // elements between batches of src
  uint dst_batch;  // elements of one packed batch
  uint k_step;     // the launch's x workgroup count (not gl_NumWorkGroups: a grid may be split)
} p;

void main() {
  const uint t = gl_LocalInvocationID.x;
  const uint width = gl_WorkGroupSize.x / 4;
  const uint i = kKMajor ? t % width : t / 4;
  const uint s = kKMajor ? t / width : t % 4;
  const uint row = gl_WorkGroupID.y * width + i;
  const uint k_groups = (p.k_extent + 3) / 4;
  const uint src_base = gl_WorkGroupID.z * p.src_batch + row * p.stride_p;
  const uint dst_base = gl_WorkGroupID.z * p.dst_batch + gl_WorkGroupID.y * k_groups * gl_WorkGroupSize.x + t;
  for (uint g = gl_WorkGroupID.x; g < k_groups; g += p.k_step) {
    const uint k = g * 4 + s;
    float v = 0.0;
    if (row < p.p_extent && k < p.k_extent) v = src[src_base + k * p.stride_k];
    dst[dst_base + g * gl_WorkGroupSize.x] = v;
  }
}
