#version 450
// fill: dst[i] = value for i < n, as raw 32-bit words (f32 or i32 alike).
// Push constants mirror vkp::vk::FillPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;           // kFillWorkgroup
layout(constant_id = 1) const uint kPerInvocation = 4;

layout(std430, binding = 0) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint n;
  uint value;
} p;

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) dst[i] = p.value;
  }
}
