#version 450
// softmax: row-wise kernels over x [rows, cols], one invocation per row, summing in a
// fixed order. kMode:
//   0 softmax       out[r][c] = exp(x - max) / sum exp(x - max)
//   1 log_softmax   out[r][c] = x - max - log sum exp(x - max)
//   2 xent          out[r] = log sum exp(load_x(r)) - load_x(r)[label[r]]   (sparse cross entropy)
//   3 xent_grad     out[r][c] = load_dy(r) * (softmax(load_x(r))[c] - (c == label[r]))
//   4 in_top_k      out[r] = 1 if fewer than k entries of load_x(r) exceed load_x(r)[label[r]], else 0;
//                   0 for a row with a NaN or infinite entry (TensorFlow's rule), so a
//                   diverged model never counts as right
// A label outside [0, cols) gives NaN (modes 2, 3) or 0 (mode 4).
// Push constants mirror vkp::vk::SoftmaxPush. Launch: 1-D over rows.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;

#include "f16_storage.glsl"
#include "texel_input.glsl"
// x and dy are texel buffers in the _texel build (on lavapipe a storage-buffer load is a
// loop over the lanes).
VKP_TEXEL_INPUT4(0, X, x)
layout(std430, binding = 1) readonly buffer Labels { int label[]; };  // modes 2-4
VKP_TEXEL_INPUT4(2, Dy, dy)                                           // mode 3
layout(std430, binding = 3) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint rows, cols;
  uint k;
} p;

void main() {
  const uint r = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (r >= p.rows) return;
  const uint row = r * p.cols;
  if (kMode == 4) {
    const int t = label[r];
    if (t < 0 || t >= int(p.cols)) {
      out_[r] = 0.0;
      return;
    }
    const float target = load_x(row + uint(t));
    uint above = 0;
    bool finite = true;
    for (uint c = 0; c < p.cols; ++c) {
      const float v = load_x(row + c);
      above += v > target ? 1u : 0u;
      finite = finite && !isnan(v) && !isinf(v);
    }
    out_[r] = finite && above < p.k ? 1.0 : 0.0;
    return;
  }
  float top = load_x(row);
  for (uint c = 1; c < p.cols; ++c) top = max(top, load_x(row + c));
  float sum = 0.0;
  for (uint c = 0; c < p.cols; ++c) sum += exp(load_x(row + c) - top);
  const float log_sum = log(sum);
  if (kMode == 0) {
    for (uint c = 0; c < p.cols; ++c) out_[row + c] = exp(load_x(row + c) - top) / sum;
  } else if (kMode == 1) {
    for (uint c = 0; c < p.cols; ++c) out_[row + c] = load_x(row + c) - top - log_sum;
  } else {
    const int t = label[r];
    const bool valid = t >= 0 && t < int(p.cols);
    if (kMode == 2) {
      out_[r] = valid ? top + log_sum - load_x(row + uint(t)) : 0.0 / 0.0;
    } else {
      const float g = valid ? load_dy(r) : 0.0 / 0.0;
      for (uint c = 0; c < p.cols; ++c)
        out_[row + c] = g * (exp(load_x(row + c) - top) / sum - (int(c) == t ? 1.0 : 0.0));
    }
  }
}
