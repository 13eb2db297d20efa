#version 450
// elementwise_chain: a chain of up to 8 elementwise ops (vkp::shaders::UnaryOp and BinaryOp)
// over up to 4 inputs in one pass: out[i] = r[kSteps - 1] with, step by step,
//   r[s] = unary_value(op, a, alpha[s])      (kOp[s] < 32: op = kOp[s])
//   r[s] = binary_value(op, a, b, alpha[s])  (kOp[s] >= 32: op = kOp[s] - 32)
// where an operand (kA[s], kB[s]) is input k (0-3) or the result of step t (4 + t).
// Input k is read at i (kMode[k] 0: the output's shape), at i % channels (1: a vector
// along the last axis) or at 0 (2: one value). The chain is fixed by specialization
// constants, so the driver compiles straight-line code for each chain (this is vkpack's
// template for fused elementwise kernels: no run-time GLSL). Each invocation does
// kPerInvocation elements, a workgroup apart. Launch: grid_1d over ceil(n / (64 *
// kPerInvocation)) workgroups. Push constants mirror vkp::vk::ChainPush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kSteps = 1;
layout(constant_id = 1) const uint kOp0 = 0;
layout(constant_id = 2) const uint kOp1 = 0;
layout(constant_id = 3) const uint kOp2 = 0;
layout(constant_id = 4) const uint kOp3 = 0;
layout(constant_id = 5) const uint kOp4 = 0;
layout(constant_id = 6) const uint kOp5 = 0;
layout(constant_id = 7) const uint kOp6 = 0;
layout(constant_id = 8) const uint kOp7 = 0;
layout(constant_id = 9) const uint kA0 = 0;
layout(constant_id = 10) const uint kA1 = 0;
layout(constant_id = 11) const uint kA2 = 0;
layout(constant_id = 12) const uint kA3 = 0;
layout(constant_id = 13) const uint kA4 = 0;
layout(constant_id = 14) const uint kA5 = 0;
layout(constant_id = 15) const uint kA6 = 0;
layout(constant_id = 16) const uint kA7 = 0;
layout(constant_id = 17) const uint kB0 = 0;
layout(constant_id = 18) const uint kB1 = 0;
layout(constant_id = 19) const uint kB2 = 0;
layout(constant_id = 20) const uint kB3 = 0;
layout(constant_id = 21) const uint kB4 = 0;
layout(constant_id = 22) const uint kB5 = 0;
layout(constant_id = 23) const uint kB6 = 0;
layout(constant_id = 24) const uint kB7 = 0;
layout(constant_id = 25) const uint kMode0 = 0;
layout(constant_id = 26) const uint kMode1 = 0;
layout(constant_id = 27) const uint kMode2 = 0;
layout(constant_id = 28) const uint kMode3 = 0;
layout(constant_id = 29) const uint kInputs = 1;
layout(constant_id = 30) const uint kPerInvocation = 4;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, In0, in0)
VKP_TEXEL_INPUT4(1, In1, in1)
VKP_TEXEL_INPUT4(2, In2, in2)
VKP_TEXEL_INPUT4(3, In3, in3)
VKP_OUTPUT(4, Out, out_)
layout(push_constant) uniform Push {
  uint n;
  uint channels;
  float alpha[8];
} p;

uint op_of(uint s) {
  switch (s) {
    case 0: return kOp0;
    case 1: return kOp1;
    case 2: return kOp2;
    case 3: return kOp3;
    case 4: return kOp4;
    case 5: return kOp5;
    case 6: return kOp6;
  }
  return kOp7;
}

uint a_of(uint s) {
  switch (s) {
    case 0: return kA0;
    case 1: return kA1;
    case 2: return kA2;
    case 3: return kA3;
    case 4: return kA4;
    case 5: return kA5;
    case 6: return kA6;
  }
  return kA7;
}

uint b_of(uint s) {
  switch (s) {
    case 0: return kB0;
    case 1: return kB1;
    case 2: return kB2;
    case 3: return kB3;
    case 4: return kB4;
    case 5: return kB5;
    case 6: return kB6;
  }
  return kB7;
}

uint index_of(uint mode, uint i) { return mode == 0 ? i : mode == 1 ? i % p.channels : 0; }

float value(uint i) {
  float v[12];  // inputs 0-3, then the steps' results
  v[0] = load_in0(index_of(kMode0, i));
  v[1] = v[2] = v[3] = 0.0;  // unused inputs are bound to input 0: never read them
  if (kInputs > 1) v[1] = load_in1(index_of(kMode1, i));
  if (kInputs > 2) v[2] = load_in2(index_of(kMode2, i));
  if (kInputs > 3) v[3] = load_in3(index_of(kMode3, i));
  for (uint s = 0; s < kSteps; ++s) {
    const uint op = op_of(s);
    const float a = v[a_of(s)];
    v[4 + s] = op < 32 ? unary_value(op, a, p.alpha[s]) : binary_value(op - 32, a, v[b_of(s)], p.alpha[s]);
  }
  return v[3 + kSteps];
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) store_out_(i, value(i));
  }
}
