#version 450
// unary: y[i] = f(x[i]) for i < n, f chosen by the specialization constant kOp
// (values of vkp::vk::UnaryOp). x and y may be the same buffer range (in place).
// Push constants mirror vkp::vk::UnaryPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const uint kOp = 0;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform Push {
  uint n;
} p;

float apply(float v) {
  switch (kOp) {
    case 0: return max(v, 0.0);                                // relu
    case 1: {                                                  // sigmoid, no overflow
      const float e = exp(-abs(v));
      return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    }
    case 2: {                                                  // tanh, no overflow
      const float e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case 3: return exp(v);
    case 4: return log(v);
    case 5: return sqrt(v);
    case 6: return inversesqrt(v);
    case 7: return -v;
    case 8: return abs(v);
    case 9: return v * v;                                      // square
  }
  return v;
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) y[i] = apply(x[i]);
  }
}
