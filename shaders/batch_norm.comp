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
// sums holds [sum dy, sum dy * xhat] per channel (batch_norm_reduce, kMode 1).
// An invocation owns one channel, or one vec4 of 4 consecutive channels when kVec4
// (c % 4 == 0, aligned), and reads that channel's factors once; it then walks rows
// r, r + p.chunk, r + 2 p.chunk, ... below m. With p.chunk = m (GPU devices) that is
// one element or vec4 per invocation, neighbours side by side; CPU devices give each
// invocation several rows, since there every load whose address differs across the
// SIMD lanes is a loop over the lanes, and the per-channel factors cost 4 to 6 such
// loads per channel against 2 or 3 for an element.
// x, dy and the result may be float16 (f16_storage.glsl). Push constants mirror
// vkp::vk::BatchNormPush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const bool kVec4 = false;
layout(constant_id = 2) const bool kRelu = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)
layout(std430, binding = 1) readonly buffer Stats { float stats[]; };  // mean [c], var [c]
layout(std430, binding = 2) readonly buffer Gamma { float gamma[]; };
layout(std430, binding = 3) readonly buffer Beta { float beta[]; };    // kMode 0, kRelu
VKP_TEXEL_INPUT4(4, Dy, dy)                                            // kMode 1, 2
layout(std430, binding = 5) readonly buffer Sums { float sums[]; };    // kMode 1
VKP_OUTPUT4(6, Out, out_)
layout(push_constant) uniform Push {
  uint n;
  uint c;
  uint chunk;  // rows between an invocation's rows; invocations: chunk * (c or c / 4)
  float eps;
} p;

// One channel's operands, read once per invocation.
struct Channel {
  float mean, rstd, gamma, beta, sum_dy, sum_dy_xhat;
};

Channel channel(uint ch) {
  Channel k;
  k.mean = stats[ch];
  k.rstd = inversesqrt(stats[p.c + ch] + p.eps);
  k.gamma = gamma[ch];
  k.beta = kMode == 0 || kRelu ? beta[ch] : 0.0;
  k.sum_dy = kMode == 1 ? sums[ch] : 0.0;
  k.sum_dy_xhat = kMode == 1 ? sums[p.c + ch] : 0.0;
  return k;
}

float value(float v, float g, Channel k) {  // g: dy, by value
  const float xhat = (v - k.mean) * k.rstd;
  if (kMode == 0) return kRelu ? max(xhat * k.gamma + k.beta, 0.0) : xhat * k.gamma + k.beta;
  if (kRelu && !(xhat * k.gamma + k.beta > 0.0)) g = 0.0;
  if (kMode == 2) return k.gamma * k.rstd * g;
  const float m = float(p.n / p.c);
  return k.gamma * k.rstd * (g - (k.sum_dy + xhat * k.sum_dy_xhat) / m);
}

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint m = p.n / p.c, per_row = kVec4 ? p.c / 4 : p.c;
  if (index >= p.chunk * per_row) return;
  const uint at = index % per_row;  // the channel, or vec4 of channels
  if (kVec4) {
    const Channel k0 = channel(4 * at), k1 = channel(4 * at + 1), k2 = channel(4 * at + 2), k3 = channel(4 * at + 3);
    for (uint r = index / per_row; r < m; r += p.chunk) {
      const uint i = r * per_row + at;
      const vec4 v = load4_x(i), g = kMode == 0 ? vec4(0.0) : load4_dy(i);
      store4_out_(i, vec4(value(v.x, g.x, k0), value(v.y, g.y, k1), value(v.z, g.z, k2), value(v.w, g.w, k3)));
    }
    return;
  }
  const Channel k = channel(at);
  for (uint r = index / per_row; r < m; r += p.chunk) {
    const uint i = r * per_row + at;
    store_out_(i, value(load_x(i), kMode == 0 ? 0.0 : load_dy(i), k));
  }
}
