#version 450
// batch_norm: elementwise over x viewed as [m, c] (channels last); per channel:
//   rstd = 1 / sqrt(var + eps), xhat = (x - mean) * rstd
//   kMode 0 (forward)             y  = xhat * gamma + beta
//   kMode 1 (gradient, batch      dx = gamma * rstd * (dy - (sum_dy + xhat * sum_dy_xhat) / m)
//            statistics)               (mean and var are x's own: their gradients are folded in)
//   kMode 2 (gradient, fixed      dx = gamma * rstd * dy
//            statistics)
// kRelu: a ReLU follows: the forward writes max(y, 0), and the gradients take dy as 0
// where xhat * gamma + beta <= 0 (the ReLU's gradient, recomputed from x).
// sums holds [sum dy, sum dy * xhat] per channel (batch_norm_reduce, kMode 1). Every
// invocation takes one vec4 of 4 consecutive channels when kVec4 (c % 4 == 0, aligned).
// x, dy and the result may be float16 (f16_storage.glsl). Push constants mirror
// vkp::vk::BatchNormPush.
#extension GL_GOOGLE_include_directive : require
#ifdef VKP_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const bool kVec4 = false;
layout(constant_id = 2) const bool kRelu = false;

#include "f16_storage.glsl"
VKP_INPUT4(0, X, x)
layout(std430, binding = 1) readonly buffer Stats { float stats[]; };  // mean [c], var [c]
layout(std430, binding = 2) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 3) readonly buffer Beta { float beta[]; };    // kMode 0, kRelu
VKP_INPUT4(4, Dy, dy)                                                  // kMode 1, 2
layout(std430, binding = 5) readonly buffer Sums { float sums[]; };    // kMode 1
VKP_OUTPUT4(6, Out, out_)
layout(push_constant) uniform Push {
  uint n;
  uint c;
  uint chunk;  // unused here
  float eps;
} p;

// The per-channel factors of channel ch: y = v * scale + shift (forward), or
// dx = dy * scale + (xhat-term) (gradient).
float value(float v, float g, uint ch) {  // g: dy, by value
  const float mean = stats[ch], rstd = inversesqrt(stats[p.c + ch] + p.eps);
  const float xhat = (v - mean) * rstd;
  if (kMode == 0) return kRelu ? max(xhat * gamma[ch] + beta[ch], 0.0) : xhat * gamma[ch] + beta[ch];
  if (kRelu && !(xhat * gamma[ch] + beta[ch] > 0.0)) g = 0.0;
  if (kMode == 2) return gamma[ch] * rstd * g;
  const float m = float(p.n / p.c);
  return gamma[ch] * rstd * (g - (sums[ch] + xhat * sums[p.c + ch]) / m);
}

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (kVec4) {
    if (index >= p.n / 4) return;
    const uint ch = (4 * index) % p.c;
    const vec4 v = load4_x(index), g = kMode == 0 ? vec4(0.0) : load4_dy(index);
    store4_out_(index, vec4(value(v.x, g.x, ch), value(v.y, g.y, ch + 1), value(v.z, g.z, ch + 2), value(v.w, g.w, ch + 3)));
    return;
  }
  if (index >= p.n) return;
  store_out_(index, value(load_x(index), kMode == 0 ? 0.0 : load_dy(index), index % p.c));
}
