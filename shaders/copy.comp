#version 450
// copy: strided gather of 32-bit words, up to 6 dims.
//   dst[dst_offset + i] = src[src_offset + sum_d idx_d(i) * src_strides[d]]
// where idx(i) unravels i over dims (row-major). With these strides the same kernel
// slices, permutes (transposes), broadcasts and, through dst_offset, concatenates.
// Push constants mirror vkp::vk::CopyPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint n;              // elements to write
  uint rank;           // dims in use, 1..6
  uint src_offset;     // elements
  uint dst_offset;     // elements
  uint dims[6];        // extents of the copied region, outermost first
  uint src_strides[6]; // element strides of src per dim
} p;

uint src_index(uint i) {
  uint offset = p.src_offset;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    const uint extent = p.dims[d];
    offset += (i % extent) * p.src_strides[d];
    i /= extent;
  }
  return offset;
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) dst[p.dst_offset + i] = src[src_index(i)];
  }
}
