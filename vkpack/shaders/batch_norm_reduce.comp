#version 450
// batch_norm_reduce: per-channel reductions of x viewed as [m, c] (channels last), in
// two passes with a fixed order (deterministic, no atomics):
//   pass 0, one invocation per (chunk of rows, channel), writes partial[chunk][channel][3]:
//     kMode 0 (statistics): count, mean and sum of squared deviations (Welford);
//     kMode 1 (gradient sums): sum dy and sum dy * xhat, xhat = (x - mean) / sqrt(var + eps);
//       with kRelu, dy counts as 0 where xhat * gamma + beta <= 0 (a ReLU followed);
//   pass 1, one invocation per channel, merges the chunks in order into out[2][c]:
//     kMode 0: mean and biased variance (Chan et al.'s pairwise update);
//     kMode 1: sum dy and sum dy * xhat.
// x and dy may be float16 (f16_storage.glsl). Push constants mirror vkp::vk::BatchNormPush.
#extension GL_GOOGLE_include_directive : require
#ifdef VKP_F16
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const uint kPass = 0;
layout(constant_id = 2) const bool kRelu = false;

#include "f16_storage.glsl"
VKP_INPUT(0, X, x)
VKP_INPUT(1, Dy, dy)                                                   // kMode 1
layout(std430, binding = 2) readonly buffer Stats { float stats[]; };  // kMode 1: mean [c], var [c]
layout(std430, binding = 3) buffer Partial { float partial[]; };       // [chunks][c][3]
layout(std430, binding = 4) writeonly buffer Out { float out_[]; };    // [2][c]
layout(std430, binding = 5) readonly buffer Gamma { float gamma[]; };  // kRelu
layout(std430, binding = 6) readonly buffer Beta { float beta[]; };    // kRelu
layout(push_constant) uniform Push {
  uint n;       // m * c
  uint c;
  uint chunk;   // rows per chunk
  float eps;
} p;

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint m = p.n / p.c, chunks = (m + p.chunk - 1) / p.chunk;
  if (kPass == 0) {
    if (index >= chunks * p.c) return;
    const uint ch = index % p.c, s = index / p.c;
    const uint begin = s * p.chunk, end = min(m, begin + p.chunk);
    float a = 0.0, b = 0.0, count = 0.0;
    if (kMode == 0) {
      for (uint r = begin; r < end; ++r) {  // Welford: a = mean, b = sum of squared deviations
        const float v = load_x(r * p.c + ch);
        count += 1.0;
        const float delta = v - a;
        a += delta / count;
        b += delta * (v - a);
      }
    } else {
      const float mean = stats[ch], rstd = inversesqrt(stats[p.c + ch] + p.eps);
      for (uint r = begin; r < end; ++r) {
        // As batch_norm.comp computes xhat and the ReLU's input, operation for operation.
        const float xhat = (load_x(r * p.c + ch) - mean) * rstd;
        float g = load_dy(r * p.c + ch);
        if (kRelu && !(xhat * gamma[ch] + beta[ch] > 0.0)) g = 0.0;
        a += g;
        b += g * xhat;
      }
    }
    partial[3 * index] = count;
    partial[3 * index + 1] = a;
    partial[3 * index + 2] = b;
    return;
  }
  if (index >= p.c) return;
  float count = 0.0, a = 0.0, b = 0.0;
  for (uint s = 0; s < chunks; ++s) {
    const uint at = 3 * (s * p.c + index);
    if (kMode == 0) {
      const float nb = partial[at], mb = partial[at + 1], total = count + nb;
      const float delta = mb - a;
      b += partial[at + 2] + delta * delta * count * nb / total;
      a += delta * nb / total;
      count = total;
    } else {
      a += partial[at + 1];
      b += partial[at + 2];
    }
  }
  out_[index] = a;
  out_[p.c + index] = kMode == 0 ? b / count : b;
}
