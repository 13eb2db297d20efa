#version 450
// pool: max or average over windows of NHWC images. kMode 0: max; 1: average over the
// window's positions inside the image (padding not counted, as TensorFlow).
// kGrad 1: the gradient instead, dx from x and dy: one invocation per input item gathers
// over the windows that cover it, in a fixed order (deterministic). kGrad 2: the same
// gradient where the windows tile the input exactly (stride = window, no padding, no
// remainder): one invocation per window finds its maximum once and writes every item of
// the window, bit for bit what kGrad 1 writes. For max the gradient goes to the first
// maximum of each window in scan order.
// An invocation takes kWidth channels of one pixel: 4 (vec4s) when c % 4 == 0.
// Push constants mirror vkp::vk::PoolPush. Launch: 1-D over the output (forward, tiled
// gradient) or the input (gathered gradient) items.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const uint kGrad = 0;  // 0: forward; 1: gradient, gathered; 2: gradient, tiled
layout(constant_id = 2) const uint kWidth = 1;  // 1 or 4

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, xs)
VKP_TEXEL_INPUT4(1, Dy, dys)  // the gradient only
VKP_OUTPUT4(2, Out, outs)
layout(push_constant) uniform Push {
  uint n, h, w, c;
  uint oh, ow;
  uint kh, kw;
  uint stride_h, stride_w;
  uint pad_top, pad_left;
} p;

// kWidth channels starting at element `at` (a multiple of kWidth).
vec4 load_x(uint at) { return kWidth == 4 ? load4_xs(at / 4) : vec4(load_xs(at)); }
vec4 load_dy(uint at) { return kWidth == 4 ? load4_dys(at / 4) : vec4(load_dys(at)); }
void store(uint at, vec4 v) {
  if (kWidth == 4)
    store4_outs(at / 4, v);
  else
    store_outs(at, v.x);
}

// The window of output (oy, ox) clipped to the image: [y0, y1) x [x0, x1).
void window(uint oy, uint ox, out int y0, out int y1, out int x0, out int x1) {
  y0 = int(oy * p.stride_h) - int(p.pad_top);
  x0 = int(ox * p.stride_w) - int(p.pad_left);
  y1 = min(y0 + int(p.kh), int(p.h));
  x1 = min(x0 + int(p.kw), int(p.w));
  y0 = max(y0, 0);
  x0 = max(x0, 0);
}

uint at(uint b, uint y, uint xx, uint ch) { return ((b * p.h + y) * p.w + xx) * p.c + ch; }

// Per channel, the pixel (y * w + x) of the first maximum of a window, and its value.
uvec4 argmax(uint b, uint ch, int y0, int y1, int x0, int x1, out vec4 best) {
  best = load_x(at(b, uint(y0), uint(x0), ch));
  uvec4 where = uvec4(uint(y0) * p.w + uint(x0));
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx) {
      const vec4 v = load_x(at(b, uint(y), uint(xx), ch));
      const bvec4 better = greaterThan(v, best);
      best = mix(best, v, better);
      where = mix(where, uvec4(uint(y) * p.w + uint(xx)), better);
    }
  return where;
}

void forward(uint element) {
  const uint ch = element % p.c, ox = (element / p.c) % p.ow, oy = (element / (p.c * p.ow)) % p.oh;
  const uint b = element / (p.c * p.ow * p.oh);
  int y0, y1, x0, x1;
  window(oy, ox, y0, y1, x0, x1);
  if (kMode == 0) {
    vec4 best;
    argmax(b, ch, y0, y1, x0, x1, best);
    store(element, best);
    return;
  }
  vec4 sum = vec4(0.0);
  for (int y = y0; y < y1; ++y)
    for (int xx = x0; xx < x1; ++xx) sum += load_x(at(b, uint(y), uint(xx), ch));
  store(element, sum / float((y1 - y0) * (x1 - x0)));
}

void backward(uint element) {
  const uint ch = element % p.c, xx = (element / p.c) % p.w, y = (element / (p.c * p.w)) % p.h;
  const uint b = element / (p.c * p.w * p.h);
  // Outputs whose window covers (y, xx): oy * stride - pad <= y < oy * stride - pad + kh.
  const int top = int(y + p.pad_top), left = int(xx + p.pad_left);
  const int oy0 = max(0, (top - int(p.kh) + int(p.stride_h)) / int(p.stride_h));
  const int oy1 = min(int(p.oh), top / int(p.stride_h) + 1);
  const int ox0 = max(0, (left - int(p.kw) + int(p.stride_w)) / int(p.stride_w));
  const int ox1 = min(int(p.ow), left / int(p.stride_w) + 1);
  const uint pixel = y * p.w + xx;
  vec4 sum = vec4(0.0);
  for (int oy = oy0; oy < oy1; ++oy)
    for (int ox = ox0; ox < ox1; ++ox) {
      int y0, y1, x0, x1;
      window(uint(oy), uint(ox), y0, y1, x0, x1);
      if (int(y) < y0 || int(y) >= y1 || int(xx) < x0 || int(xx) >= x1) continue;
      const vec4 g = load_dy(((b * p.oh + uint(oy)) * p.ow + uint(ox)) * p.c + ch);
      if (kMode == 0) {
        vec4 best;
        sum += mix(vec4(0.0), g, equal(argmax(b, ch, y0, y1, x0, x1, best), uvec4(pixel)));
      } else {
        sum += g / float((y1 - y0) * (x1 - x0));
      }
    }
  store(element, sum);
}

void tiled_backward(uint element) {
  const uint ch = element % p.c, ox = (element / p.c) % p.ow, oy = (element / (p.c * p.ow)) % p.oh;
  const uint b = element / (p.c * p.ow * p.oh);
  int y0, y1, x0, x1;
  window(oy, ox, y0, y1, x0, x1);
  const vec4 g = load_dy(element);
  // 0 + g as the gathered sum has it (so that -0 comes out +0 alike).
  if (kMode == 0) {
    vec4 best;
    const uvec4 where = argmax(b, ch, y0, y1, x0, x1, best);
    for (int y = y0; y < y1; ++y)
      for (int xx = x0; xx < x1; ++xx)
        store(at(b, uint(y), uint(xx), ch), vec4(0.0) + mix(vec4(0.0), g, equal(where, uvec4(uint(y) * p.w + uint(xx)))));
  } else {
    const vec4 share = vec4(0.0) + g / float((y1 - y0) * (x1 - x0));
    for (int y = y0; y < y1; ++y)
      for (int xx = x0; xx < x1; ++xx) store(at(b, uint(y), uint(xx), ch), share);
  }
}

void main() {
  const uint item = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint elements = kGrad == 1 ? p.n * p.h * p.w * p.c : p.n * p.oh * p.ow * p.c;
  if (item * kWidth >= elements) return;
  if (kGrad == 0)
    forward(item * kWidth);
  else if (kGrad == 1)
    backward(item * kWidth);
  else
    tiled_backward(item * kWidth);
}
