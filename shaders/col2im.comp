#version 450
// col2im: the adjoint of im2col, summing every patch entry back onto the input pixel
// it came from (the input gradient of a convolution). One invocation per input element
// (kWidth channels of one pixel: 4 when cg % 4 == 0) gathers over the windows that cover
// it in a fixed order: deterministic, no atomics.
//   dx[b][y][x][ch] = sum over (i, j) with oy = (y + pad_top - i * dilation_h) / stride_h
//                     integral and in [0, oh) (likewise ox) of col[r(b, oy, ox)][g][(i*kw+j)*cg + ch']
// Launch: 1-D over N*H*W*C / kWidth items.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "conv.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kWidth = 1;  // 1 or 4

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, Col, col)  // float32 (the host allows no float16 col); a texel buffer in the _texel build
VKP_OUTPUT4(1, Dx, dx)

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (index >= p.n * p.h * p.w * p.c / kWidth) return;
  const uint cg = p.c / p.groups;
  const uint k = p.kh * p.kw * cg;
  const uint element = index * kWidth;  // the first channel of this item
  const uint ch = element % p.c, xx = (element / p.c) % p.w, y = (element / (p.c * p.w)) % p.h;
  const uint b = element / (p.c * p.w * p.h);
  const uint g = ch / cg, chg = ch % cg;
  vec4 sum = vec4(0.0);
  for (uint i = 0; i < p.kh; ++i) {
    const int ty = int(y + p.pad_top) - int(i * p.dilation_h);
    if (ty < 0 || ty % int(p.stride_h) != 0) continue;
    const uint oy = uint(ty) / p.stride_h;
    if (oy >= p.oh) continue;
    for (uint j = 0; j < p.kw; ++j) {
      const int tx = int(xx + p.pad_left) - int(j * p.dilation_w);
      if (tx < 0 || tx % int(p.stride_w) != 0) continue;
      const uint ox = uint(tx) / p.stride_w;
      if (ox >= p.ow) continue;
      const uint at = ((b * p.oh + oy) * p.ow + ox) * p.groups * k + g * k + (i * p.kw + j) * cg + chg;
      if (kWidth == 4)
        sum += load4_col(at / 4);
      else
        sum.x += load_col(at);
    }
  }
  if (kWidth == 4)
    store4_dx(index, sum);
  else
    store_dx(index, sum.x);
}
