#version 450
// cast: dst[i] = convert(src[i]) for i < n. kMode: 0 f32 -> i32 (toward zero),
// 1 i32 -> f32, 2 u8 -> f32 (four bytes per source word, little-endian), 3 a 32-bit copy.
// Push constants mirror vkp::vk::CastPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kMode = 0;

layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
layout(push_constant) uniform Push {
  uint n;
} p;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  switch (kMode) {
    case 0: dst[i] = uint(int(uintBitsToFloat(src[i]))); break;
    case 1: dst[i] = floatBitsToUint(float(int(src[i]))); break;
    case 2: dst[i] = floatBitsToUint(float((src[i / 4] >> (8 * (i % 4))) & 0xffu)); break;
    default: dst[i] = src[i]; break;
  }
}
