#version 450
// unary: y[i] = f(x[i]) for i < n, f chosen by the specialization constant kOp
// (values of vkp::vk::UnaryOp). x and y may be the same buffer range (in place).
// kVec4: 16-byte aligned x and y, taken a vec4 at a time (see binary.comp).
// Push constants mirror vkp::vk::UnaryPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const bool kVec4 = false;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 0) readonly buffer X4 { vec4 x4[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(std430, binding = 1) writeonly buffer Y4 { vec4 y4[]; };
layout(push_constant) uniform Push {
  uint n;
  float alpha;  // leaky_relu's slope, elu's alpha
} p;

vec4 apply(vec4 v) {
  switch (kOp) {
    case 0: return max(v, vec4(0.0));                          // relu
    case 1: {                                                  // sigmoid, no overflow
      const vec4 e = exp(-abs(v));
      return mix(e / (1.0 + e), 1.0 / (1.0 + e), greaterThanEqual(v, vec4(0.0)));
    }
    case 2: {                                                  // tanh, no overflow
      const vec4 e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case 3: return exp(v);
    case 4: return log(v);
    case 5: return sqrt(v);
    case 6: return inversesqrt(v);
    case 7: return -v;
    case 8: return abs(v);
    case 9: return v * v;                                      // square
    case 10: return mix(p.alpha * v, v, greaterThan(v, vec4(0.0)));                      // leaky_relu
    case 11: return mix(p.alpha * (exp(min(v, vec4(0.0))) - 1.0), v, greaterThan(v, vec4(0.0)));  // elu
  }
  return v;
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  if (kVec4) {
    const uint n4 = p.n / 4;
    for (uint j = 0; j < kPerInvocation; ++j) {
      const uint q = base + j * gl_WorkGroupSize.x;
      if (q < n4) {
        y4[q] = apply(x4[q]);
      } else if (q == n4) {
        for (uint i = 4 * n4; i < p.n; ++i) y[i] = apply(vec4(x[i])).x;
      }
    }
    return;
  }
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) y[i] = apply(vec4(x[i])).x;
  }
}
