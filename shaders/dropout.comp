#version 450
// dropout: y[i] = x[i] * scale where u(i) >= rate, else 0, with u(i) uniform in [0, 1)
// from Philox: word 0 of philox4x32((i, step, key, 0), seed) >> 8, times 2^-24. `step`
// is word 1 of the scalar buffer (the global step), so each step draws a new mask, the
// gradient (the same op on dy, same key) applies the same mask, and a resumed run draws
// the masks of the uninterrupted one.
// Push constants mirror vkp::vk::DropoutPush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "philox.glsl"

layout(local_size_x = 64) in;

#include "f16_storage.glsl"
VKP_INPUT(0, X, x)
layout(std430, binding = 1) readonly buffer Scalars { uint scalars[]; };
VKP_OUTPUT(2, Y, y)
layout(push_constant) uniform Push {
  uint n;
  float rate, scale;
  uint key;
  uint seed_lo, seed_hi;
} p;

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  const uint bits = philox4x32(uvec4(i, scalars[1], p.key, 0u), uvec2(p.seed_lo, p.seed_hi)).x;
  const float u = float(bits >> 8) * (1.0 / 16777216.0);
  store_y(i, u >= p.rate ? load_x(i) * p.scale : 0.0);
}
