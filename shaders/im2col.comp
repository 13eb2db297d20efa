#version 450
// im2col: the patches of a convolution as the rows of a matrix (for a GEMM).
//   col[r][g][(i * kw + j) * cg + ch] = x[b][y][x][g * cg + ch]  (0 where (y, x) is padding)
// with r = (b * oh + oy) * ow + ox, y = oy * stride_h - pad_top + i * dilation_h, and
// likewise x; cg = c / groups. col is [N*OH*OW, groups * KH*KW*cg].
// Launch: (ceil(groups*KH*KW*cg / 64), rows over y and z): each workgroup fills part of
// one row, so the row's decomposition is the same in every lane.
#extension GL_GOOGLE_include_directive : require
#include "conv.glsl"

layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Col { float col[]; };

void main() {
  const uint cg = p.c / p.groups;
  const uint k = p.kh * p.kw * cg;  // columns per group
  const uint column = gl_GlobalInvocationID.x;
  if (column >= p.groups * k) return;
  const uint row = gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y;
  if (row >= p.n * p.oh * p.ow) return;
  const uint ox = row % p.ow, oy = (row / p.ow) % p.oh, b = row / (p.ow * p.oh);
  const uint g = column / k, within = column % k;
  const uint ch = within % cg, j = (within / cg) % p.kw, i = within / (cg * p.kw);
  const int y = int(oy * p.stride_h + i * p.dilation_h) - int(p.pad_top);
  const int xx = int(ox * p.stride_w + j * p.dilation_w) - int(p.pad_left);
  float v = 0.0;
  if (y >= 0 && y < int(p.h) && xx >= 0 && xx < int(p.w))
    v = x[((b * p.h + uint(y)) * p.w + uint(xx)) * p.c + g * cg + ch];
  col[row * p.groups * k + column] = v;
}
