#version 450
// fill: dst[i] = value for i < n, as raw 32-bit words (f32 or i32 alike).
// kVec4: 16-byte aligned dst, written a uvec4 at a time (see binary.comp).
// Push constants mirror vkp::vk::FillPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const bool kVec4 = false;

layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(std430, binding = 0) writeonly buffer Dst4 { uvec4 dst4[]; };
layout(push_constant) uniform Push {
  uint n;
  uint value;
} p;

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  if (kVec4) {
    const uint n4 = p.n / 4;
    for (uint j = 0; j < kPerInvocation; ++j) {
      const uint q = base + j * gl_WorkGroupSize.x;
      if (q < n4) {
        dst4[q] = uvec4(p.value);
      } else if (q == n4) {
        for (uint i = 4 * n4; i < p.n; ++i) dst[i] = p.value;
      }
    }
    return;
  }
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) dst[i] = p.value;
  }
}
