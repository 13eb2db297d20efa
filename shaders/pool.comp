#version 450
// pool: max or average over windows of NHWC images. kMode 0: max; 1: average over the
// window's positions inside the image (padding not counted, as TensorFlow).
// kGrad: the gradient instead, dx from x and dy: one invocation per input element
// gathers over the windows that cover it, in a fixed order (deterministic). For max the
// gradient goes to the first maximum of each window in scan order.
// Push constants mirror vkp::vk::PoolPush. Launch: 1-D over the output (forward) or the
// input (gradient) elements.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const bool kGrad = false;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Dy { float dy[]; };  // unused by the forward pass
layout(std430, binding = 2) writeonly buffer Out { float out_[]; };
layout(push_constant) uniform Push {
  uint n, h, w, c;
  uint oh, ow;
  uint kh, kw;
  uint stride_h, stride_w;
  uint pad_top, pad_left;
} p;

// The window of output (b, oy, ox) clipped to the image: [y0, y1) x [x0, x1).
void window(uint oy, uint ox, out int y0, out int y1, out int x0, out int x1) {
  y0 = int(oy * p.stride_h) - int(p.pad_top);
  x0 = int(ox * p.stride_w) - int(p.pad_left);
  y1 = min(y0 + int(p.kh), int(p.h));
  x1 = min(x0 + int(p.kw), int(p.w));
  y0 = max(y0, 0);
  x0 = max(x0, 0);
}

uint at(uint b, uint y, uint xx, uint ch) { return ((b * p.h + y) * p.w + xx) * p.c + ch; }

// The flat index of the first maximum of a window.
uint argmax(uint b, uint ch, int y0, int y1, int x0, int x1) {
  uint best = at(b, uint(y0), uint(x0), ch);
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx)
      if (x[at(b, uint(y), uint(xx), ch)] > x[best]) best = at(b, uint(y), uint(xx), ch);
  return best;
}

void forward(uint index) {
  const uint ch = index % p.c, ox = (index / p.c) % p.ow, oy = (index / (p.c * p.ow)) % p.oh;
  const uint b = index / (p.c * p.ow * p.oh);
  int y0, y1, x0, x1;
  window(oy, ox, y0, y1, x0, x1);
  if (kMode == 0) {
    out_[index] = x[argmax(b, ch, y0, y1, x0, x1)];
    return;
  }
  float sum = 0.0;
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx) sum += x[at(b, uint(y), uint(xx), ch)];
  out_[index] = sum / float((y1 - y0) * (x1 - x0));
}

void backward(uint index) {
  const uint ch = index % p.c, xx = (index / p.c) % p.w, y = (index / (p.c * p.w)) % p.h;
  const uint b = index / (p.c * p.w * p.h);
  // Outputs whose window covers (y, xx): oy * stride - pad <= y < oy * stride - pad + kh.
  const int top = int(y + p.pad_top), left = int(xx + p.pad_left);
  const int oy0 = max(0, (top - int(p.kh) + int(p.stride_h)) / int(p.stride_h));
  const int oy1 = min(int(p.oh), top / int(p.stride_h) + 1);
  const int ox0 = max(0, (left - int(p.kw) + int(p.stride_w)) / int(p.stride_w));
  const int ox1 = min(int(p.ow), left / int(p.stride_w) + 1);
  float sum = 0.0;
  for (int oy = oy0; oy < oy1; ++oy)
    for (int ox = ox0; ox < ox1; ++ox) {
      int y0, y1, x0, x1;
      window(uint(oy), uint(ox), y0, y1, x0, x1);
      if (int(y) < y0 || int(y) >= y1 || int(xx) < x0 || int(xx) >= x1) continue;
      const float g = dy[((b * p.oh + uint(oy)) * p.ow + uint(ox)) * p.c + ch];
      if (kMode == 0) {
        if (argmax(b, ch, y0, y1, x0, x1) == index) sum += g;
      } else {
        sum += g / float((y1 - y0) * (x1 - x0));
      }
    }
  out_[index] = sum;
}

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (index >= (kGrad ? p.n * p.h * p.w * p.c : p.n * p.oh * p.ow * p.c)) return;
  if (kGrad)
    backward(index);
  else
    forward(index);
}
