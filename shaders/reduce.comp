#version 450
// reduce: one invocation per output, a sequential loop over its part of the axis, so
// the order of every sum is fixed (deterministic, no atomics).
//   x viewed as [outer, axis, inner]; the axis is cut into chunks of p.chunk;
//   y[o][s][i] = p.scale * op_{a in chunk s} x[o][a][i],  y is [outer, ceil(axis/chunk), inner]
// One pass with chunk >= axis reduces the axis; a long axis with few outputs takes two
// (partials, then their reduction). kOp: 0 sum, 1 max, 2 argmax (one pass; writes the
// i32 index of the first maximum), 3 the count of non-finite elements (inf or NaN, told
// by their exponent bits, which no compiler may fold the way it may x * 0 or x - x).
// Push constants mirror vkp::vk::ReducePush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kOp = 0;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)  // a texel buffer in the _texel build
VKP_OUTPUT(1, Y, y)
layout(std430, binding = 1) writeonly buffer YI { int y_index[]; };  // argmax's output
layout(push_constant) uniform Push {
  uint outer;
  uint axis;
  uint inner;
  uint chunk;
  float scale;
} p;

bool nonfinite(float v) { return (floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u; }
float term(float v) { return kOp == 3 ? (nonfinite(v) ? 1.0 : 0.0) : v; }

void main() {
  const uint chunks = (p.axis + p.chunk - 1) / p.chunk;
  const uint out_index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (out_index >= p.outer * chunks * p.inner) return;
  const uint i = out_index % p.inner;
  const uint s = (out_index / p.inner) % chunks;
  const uint o = out_index / (p.inner * chunks);
  const uint begin = s * p.chunk, end = min(p.axis, begin + p.chunk);
  uint at = (o * p.axis + begin) * p.inner + i;
  if (kOp == 2) {
    float best = load_x(at);
    uint best_index = 0;
    for (uint a = 0; a < end; ++a, at += p.inner)
      if (load_x(at) > best) {
        best = load_x(at);
        best_index = a;
      }
    y_index[out_index] = int(best_index);
    return;
  }
  float acc = kOp == 1 ? load_x(at) : 0.0;
  for (uint a = begin; a < end; ++a, at += p.inner) acc = kOp == 1 ? max(acc, load_x(at)) : acc + term(load_x(at));
  store_y(out_index, kOp == 0 ? acc * p.scale : acc);
}
