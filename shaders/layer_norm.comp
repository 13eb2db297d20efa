#version 450
// layer_norm: each row of x [rows, cols] normalized over its cols, one invocation per
// row, two passes in a fixed order (mean, then the mean square deviation: no
// cancellation from E[x^2] - E[x]^2):
//   kGrad 0: out = xhat = (x - mean) / sqrt(var + epsilon)
//   kGrad 1: out = dx = (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)) / sqrt(var + epsilon),
//            the gradient of xhat for x (the scale and shift are separate elementwise ops,
//            whose gradients autodiff adds).
// Push constants mirror vkp::vk::LayerNormPush. Launch: 1-D over rows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kGrad = 0;

#include "f16_storage.glsl"
#include "texel_input.glsl"
// Texel buffers in the _texel build (on lavapipe a storage-buffer load is a loop over the lanes).
VKP_TEXEL_INPUT4(0, X, x)
VKP_TEXEL_INPUT4(1, Dy, dy)  // kGrad 1: dxhat
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint rows, cols;
  float epsilon;
} p;

void main() {
  const uint r = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (r >= p.rows) return;
  const uint row = r * p.cols;
  const float n = float(p.cols);
  float sum = 0.0;
  for (uint c = 0; c < p.cols; ++c) sum += load_x(row + c);
  const float mean = sum / n;
  float squares = 0.0;
  for (uint c = 0; c < p.cols; ++c) {
    const float d = load_x(row + c) - mean;
    squares += d * d;
  }
  const float rstd = inversesqrt(squares / n + p.epsilon);
  if (kGrad == 0) {
    for (uint c = 0; c < p.cols; ++c) out_[row + c] = (load_x(row + c) - mean) * rstd;
    return;
  }
  float g_sum = 0.0, gx_sum = 0.0;
  for (uint c = 0; c < p.cols; ++c) {
    const float g = load_dy(row + c);
    g_sum += g;
    gx_sum += g * (load_x(row + c) - mean) * rstd;
  }
  const float g_mean = g_sum / n, gx_mean = gx_sum / n;
  for (uint c = 0; c < p.cols; ++c)
    out_[row + c] = (load_dy(row + c) - g_mean - (load_x(row + c) - mean) * rstd * gx_mean) * rstd;
}
