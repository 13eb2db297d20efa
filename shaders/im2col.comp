#version 450
// im2col: the patches of a convolution as the rows of a matrix (for a GEMM).
//   col[r][g][(i * kw + j) * cg + ch] = x[b][y][x][g * cg + ch]  (0 where (y, x) is padding)
// with r = (b * oh + oy) * ow + ox, y = oy * stride_h - pad_top + i * dilation_h, and
// likewise x; cg = c / groups. col is [N*OH*OW, groups * KH*KW*cg].
// kTransposed writes col^T instead, [groups * KH*KW*cg, N*OH*OW], for the filter
// gradient's GEMM (dW = col^T dy), which then reads its A untransposed.
// One invocation moves one tap's channels kWidth at a time (4 when cg % 4 == 0: whole
// vec4s, which a CPU device loads for the price of one float). Launch: 1-D over
// rows * groups*KH*KW * cg / kWidth items; transposed, neighbouring invocations take
// neighbouring rows, so that their stores land side by side.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "conv.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kWidth = 1;  // 1 or 4
layout(constant_id = 1) const bool kTransposed = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)  // a texel buffer in the _texel build
layout(std430, binding = 1) writeonly buffer Col { float col[]; };
layout(std430, binding = 1) writeonly buffer Col4 { vec4 col4[]; };

void main() {
  const uint cg = p.c / p.groups, vectors = cg / kWidth;
  const uint per_row = p.groups * p.kh * p.kw * vectors, rows = p.n * p.oh * p.ow;
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (index >= rows * per_row) return;
  const uint row = kTransposed ? index % rows : index / per_row;
  const uint item = kTransposed ? index / rows : index % per_row;
  const uint v = item % vectors, tap = item / vectors;  // tap = (g * kh + i) * kw + j
  const uint j = tap % p.kw, i = (tap / p.kw) % p.kh, g = tap / (p.kw * p.kh);
  const uint ox = row % p.ow, oy = (row / p.ow) % p.oh, b = row / (p.ow * p.oh);
  const int y = int(oy * p.stride_h + i * p.dilation_h) - int(p.pad_top);
  const int xx = int(ox * p.stride_w + j * p.dilation_w) - int(p.pad_left);
  const bool inside = y >= 0 && y < int(p.h) && xx >= 0 && xx < int(p.w);
  // Element offsets: the source channel run and its place in the row (multiples of
  // kWidth, so vec4 indices are these / 4).
  const uint from = ((b * p.h + uint(max(y, 0))) * p.w + uint(max(xx, 0))) * p.c + g * cg + v * kWidth;
  if (kTransposed) {
    // Column `row` of the rows tap * cg + v * kWidth + q.
    const uint to = (tap * cg + v * kWidth) * rows + row;
    if (kWidth == 4) {
      const vec4 value = inside ? load4_x(from / 4) : vec4(0.0);
      for (uint q = 0; q < 4; ++q) col[to + q * rows] = value[q];
    } else {
      col[to] = inside ? load_x(from) : 0.0;
    }
    return;
  }
  const uint to = row * p.groups * p.kh * p.kw * cg + tap * cg + v * kWidth;
  if (kWidth == 4)
    col4[to / 4] = inside ? load4_x(from / 4) : vec4(0.0);
  else
    col[to] = inside ? load_x(from) : 0.0;
}
