#version 450
// resize: NHWC images resampled to another size, TensorFlow 1's align_corners=False:
// output row o samples input row s = o * scale (scale = in / out, in float); kMethod 0
// (nearest) takes row min(floor(s), in - 1), 1 (bilinear) blends rows floor(s) and
// floor(s) + 1 (clamped to the last) with weight s - floor(s); columns likewise.
// kGrad 1: the input gradient instead, dx from dy: one invocation per input item gathers
// over the output rows and columns that sample it, in a fixed order (deterministic, no
// atomics). One invocation per output (forward) or input (gradient) element.
// Push constants mirror vkp::vk::ResizePush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMethod = 1;
layout(constant_id = 1) const uint kGrad = 0;

layout(std430, binding = 0) readonly buffer In { float in_[]; };  // x, or dy for the gradient
layout(std430, binding = 1) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint n, h, w, c;
  uint oh, ow;
  float scale_h, scale_w;
} p;

// The two input indices output index o samples along an axis of `size` inputs, and the
// weight of the second (0 for nearest).
void taps(uint o, uint size, float scale, out uint i0, out uint i1, out float w1) {
  const float s = float(o) * scale;
  const float f = floor(s);
  i0 = min(uint(f), size - 1);
  i1 = kMethod == 0 ? i0 : min(i0 + 1, size - 1);
  w1 = kMethod == 0 ? 0.0 : s - f;
}

// The weight with which output index o reads input index i along one axis.
float weight(uint o, uint i, uint size, float scale) {
  uint i0, i1;
  float w1;
  taps(o, size, scale, i0, i1, w1);
  return (i0 == i ? 1.0 - w1 : 0.0) + (i1 == i ? w1 : 0.0);
}

void forward(uint e) {
  const uint ch = e % p.c, ox = (e / p.c) % p.ow, oy = (e / (p.c * p.ow)) % p.oh, b = e / (p.c * p.ow * p.oh);
  uint y0, y1, x0, x1;
  float wy, wx;
  taps(oy, p.h, p.scale_h, y0, y1, wy);
  taps(ox, p.w, p.scale_w, x0, x1, wx);
  const uint row0 = (b * p.h + y0) * p.w, row1 = (b * p.h + y1) * p.w;
  const float top = (1.0 - wx) * in_[(row0 + x0) * p.c + ch] + wx * in_[(row0 + x1) * p.c + ch];
  const float bottom = (1.0 - wx) * in_[(row1 + x0) * p.c + ch] + wx * in_[(row1 + x1) * p.c + ch];
  out_[e] = (1.0 - wy) * top + wy * bottom;
}

// Output indices along an axis that may sample input index i: those whose s lies in
// [i - 1, i + 1), with a margin of one for rounding.
void candidates(uint i, uint out_size, float scale, out uint lo, out uint hi) {
  lo = uint(max(int(floor((float(i) - 1.0) / scale)) - 1, 0));
  hi = uint(min(int(ceil((float(i) + 1.0) / scale)) + 1, int(out_size) - 1));
}

void gradient(uint e) {
  const uint ch = e % p.c, ix = (e / p.c) % p.w, iy = (e / (p.c * p.w)) % p.h, b = e / (p.c * p.w * p.h);
  uint oy0, oy1, ox0, ox1;
  candidates(iy, p.oh, p.scale_h, oy0, oy1);
  candidates(ix, p.ow, p.scale_w, ox0, ox1);
  float sum = 0.0;
  for (uint oy = oy0; oy <= oy1; ++oy) {
    const float wy = weight(oy, iy, p.h, p.scale_h);
    if (wy == 0.0) continue;
    float row = 0.0;
    for (uint ox = ox0; ox <= ox1; ++ox) {
      const float wx = weight(ox, ix, p.w, p.scale_w);
      if (wx != 0.0) row += wx * in_[((b * p.oh + oy) * p.ow + ox) * p.c + ch];
    }
    sum += wy * row;
  }
  out_[e] = sum;
}

void main() {
  const uint e = linear_group() * 64 + gl_LocalInvocationID.x;
  const uint count = kGrad == 0 ? p.n * p.oh * p.ow * p.c : p.n * p.h * p.w * p.c;
  if (e >= count) return;
  if (kGrad == 0)
    forward(e);
  else
    gradient(e);
}
