#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// reduce_rows: the GPU path of reduce for inner == 1 (reducing a contiguous axis): one
// workgroup per output, its invocations read the chunk with unit stride (coalesced),
// then combine through a shared-memory tree in a fixed order (deterministic).
// Same view, output and push constants as reduce (vkp::vk::ReducePush with inner = 1).
layout(local_size_x_id = 0) in;  // a power of two
layout(constant_id = 0) const uint kWorkgroup = 256;
layout(constant_id = 1) const uint kOp = 0;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)  // a texel buffer in the _texel build
VKP_OUTPUT(1, Y, y)
layout(push_constant) uniform Push {
  uint outer;
  uint axis;
  uint inner;
  uint chunk;
  float scale;
} p;

shared float partial[kWorkgroup];

// kOp 3: the count of non-finite elements (reduce.comp).
bool nonfinite(float v) { return (floatBitsToUint(v) & 0x7f800000u) == 0x7f800000u; }
float term(float v) { return kOp == 3 ? (nonfinite(v) ? 1.0 : 0.0) : v; }

void main() {
  const uint chunks = (p.axis + p.chunk - 1) / p.chunk;
  const uint out_index =
      (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * gl_NumWorkGroups.x + gl_WorkGroupID.x;
  if (out_index >= p.outer * chunks) return;  // the whole workgroup: no barrier is skipped
  const uint s = out_index % chunks, o = out_index / chunks;
  const uint begin = s * p.chunk, end = min(p.axis, begin + p.chunk);
  const uint t = gl_LocalInvocationID.x;
  const uint row = o * p.axis;
  float acc = kOp == 1 ? load_x(row + begin) : 0.0;
  for (uint a = begin + t; a < end; a += kWorkgroup) acc = kOp == 1 ? max(acc, load_x(row + a)) : acc + term(load_x(row + a));
  partial[t] = acc;
  barrier();
  for (uint width = kWorkgroup / 2; width > 0; width /= 2) {
    if (t < width) partial[t] = kOp == 1 ? max(partial[t], partial[t + width]) : partial[t] + partial[t + width];
    barrier();
  }
  if (t == 0) store_y(out_index, kOp == 0 ? partial[0] * p.scale : partial[0]);
}
