#version 450
// unary: y[i] = f(x[i]) for i < n, f chosen by the specialization constant kOp
// (values of vkp::shaders::UnaryOp). x and y may be the same buffer range (in place).
// kVec4: 16-byte aligned x and y, taken a vec4 at a time (see binary.comp).
// Push constants mirror vkp::vk::UnaryPush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "op_codes.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const bool kVec4 = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)
VKP_OUTPUT4(1, Y, y)
layout(push_constant) uniform Push {
  uint n;
  float alpha;  // leaky_relu's slope, elu's alpha
} p;

// elementwise_ops.glsl's erfc_fit, four at a time.
vec4 erfc_fit4(vec4 z) {
  const vec4 a = abs(z), t = 1.0 / (1.0 + 0.5 * a);
  const vec4 poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                    t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const vec4 r = t * exp(-a * a + poly);
  return mix(2.0 - r, r, greaterThanEqual(z, vec4(0.0)));
}

vec4 apply(vec4 v) {
  switch (kOp) {
    case VKP_UNARY_RELU: return max(v, vec4(0.0));
    case VKP_UNARY_SIGMOID: {  // sigmoid, no overflow
      const vec4 e = exp(-abs(v));
      return mix(e / (1.0 + e), 1.0 / (1.0 + e), greaterThanEqual(v, vec4(0.0)));
    }
    case VKP_UNARY_TANH: {  // tanh, no overflow
      const vec4 e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case VKP_UNARY_EXP: return exp(v);
    case VKP_UNARY_LOG: return log(v);
    case VKP_UNARY_SQRT: return sqrt(v);
    case VKP_UNARY_RSQRT: return inversesqrt(v);
    case VKP_UNARY_NEG: return -v;
    case VKP_UNARY_ABS: return abs(v);
    case VKP_UNARY_SQUARE: return v * v;
    case VKP_UNARY_LEAKY_RELU: return mix(p.alpha * v, v, greaterThan(v, vec4(0.0)));
    case VKP_UNARY_ELU: return mix(p.alpha * (exp(min(v, vec4(0.0))) - 1.0), v, greaterThan(v, vec4(0.0)));
    case VKP_UNARY_GELU: return v * (0.5 * erfc_fit4(-0.70710678118654752 * v));
    case VKP_UNARY_FLOOR: return floor(v);
    case VKP_UNARY_ROUND: return roundEven(v);  // round, halves to even
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
        store4_y(q, apply(load4_x(q)));
      } else if (q == n4) {
        for (uint i = 4 * n4; i < p.n; ++i) store_y(i, apply(vec4(load_x(i))).x);
      }
    }
    return;
  }
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) store_y(i, apply(vec4(load_x(i))).x);
  }
}
