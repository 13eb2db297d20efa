#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// conv_pack: the patches of a convolution, read from the image through the
// convolution's index map and written straight into the panel layout of gemm_pack
// (implicit GEMM on CPU devices: no im2col matrix is written and read back).
//
// The patch matrix of group grp is P[pixel][kk], kk = (i * kw + j) * cg + ch, pixel =
// (b * oh + oy) * ow + ox among this chunk's pixel_offset + [0, pixel_count):
// P = x[b][y][x][grp * cg + ch] with y = oy * stride_h + i * dilation_h - pad_top
// (likewise x), or 0 where (y, x) is padding. The packed operand is X[p][k] of
// gemm_pack.comp with
//   kPixelsAlongK false: X[p][k] = P[p][k]  (out^T = w^T . P^T; p counts from pixel_offset)
//   kPixelsAlongK true:  X[p][k] = P[k][p]  (dw^T = dy^T . P; packed batch z = split *
//                                            groups + group holds k_split pixels)
// laid out as dst[z * dst_batch + r * 4 * width + s * width + i], run r = panel *
// k_groups + g, = X[panel * width + i][g * 4 + s].
//
// One invocation writes a 4 x 4 block as four vec4s. When cg % 4 == 0 (kVector) the 4
// patch columns of a block are 4 channels of one tap and pixel: one vec4 load. Index
// arithmetic is stepped, not divided, along k. Launch: (ceil(k_groups / chunk),
// panels, packed batches), workgroup width / 4. Push constants mirror
// vkp::vk::ConvPackPush.
layout(local_size_x_id = 0) in;  // panel width / 4
layout(constant_id = 1) const bool kPixelsAlongK = false;
layout(constant_id = 2) const bool kVector = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)  // a texel buffer in the _texel build
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push {
  uint n, h, w, c;          // input [N, H, W, C]
  uint oh, ow;              // output extents
  uint kh, kw;              // window
  uint stride_h, stride_w;
  int dilation_h, dilation_w;  // negative, with negative padding: the input gradient's
  int pad_top, pad_left;       // map, y = oy - i * dilation + pad (see conv.cpp)
  uint groups;
  uint dst_batch;           // vec4s of one packed batch
  uint chunk;               // runs per workgroup
  uint k_split;             // kPixelsAlongK: pixels per packed batch (split K)
  uint pixel_offset;        // the output pixels of this chunk: pixel_offset +
  uint pixel_count;         //   [0, pixel_count)
} p;

// A patch column kk = (i * kw + j) * cg + ch, stepped along without dividing (integer
// division is a loop over the lanes on a CPU device).
struct Column { uint i, j, ch; };

Column column_of(uint kk, uint cg) {
  const uint tap = kk / cg;
  return Column(tap / p.kw, tap % p.kw, kk % cg);
}

void step_column(inout Column col, uint by, uint cg) {
  col.ch += by;
  if (col.ch >= cg) {
    col.ch -= cg;
    if (++col.j == p.kw) {
      col.j = 0;
      ++col.i;
    }
  }
}

// An output pixel (b, oy, ox), likewise.
struct Pixel { uint b, oy, ox; };

Pixel pixel_of(uint pixel) { return Pixel(pixel / (p.ow * p.oh), (pixel / p.ow) % p.oh, pixel % p.ow); }

void step_pixel(inout Pixel px) {
  if (++px.ox == p.ow) {
    px.ox = 0;
    if (++px.oy == p.oh) {
      px.oy = 0;
      ++px.b;
    }
  }
}

// The element offset of channel grp * cg + ch of the input under column `col` of
// output pixel `px`, or -1 where that is padding.
int offset_of(Pixel px, Column col, uint grp) {
  const int y = int(px.oy * p.stride_h) + int(col.i) * p.dilation_h - p.pad_top;
  const int xx = int(px.ox * p.stride_w) + int(col.j) * p.dilation_w - p.pad_left;
  if (y < 0 || y >= int(p.h) || xx < 0 || xx >= int(p.w)) return -1;
  return int(((px.b * p.h + uint(y)) * p.w + uint(xx)) * p.c + grp * (p.c / p.groups) + col.ch);
}

float load(int at) {
  float v = 0.0;
  if (at >= 0) v = load_x(uint(at));
  return v;
}

vec4 load4(int at) {
  vec4 v = vec4(0.0);
  if (at >= 0) v = load4_x(uint(at) / 4);
  return v;
}

void main() {
  // Packed batch z: group z % groups and, along pixels, split z / groups.
  const uint blocks = gl_WorkGroupSize.x, q = gl_LocalInvocationID.x, grp = gl_WorkGroupID.z % p.groups;
  const uint cg = p.c / p.groups;
  const uint cols = p.kh * p.kw * cg;
  const uint pixel0 = p.pixel_offset + (kPixelsAlongK ? gl_WorkGroupID.z / p.groups * p.k_split : 0);
  const uint pixel_end = kPixelsAlongK ? min(p.pixel_offset + p.pixel_count, pixel0 + p.k_split) : 0;
  const uint k_extent = kPixelsAlongK ? p.k_split : cols;
  const uint k_groups = (k_extent + 3) / 4;
  const uint p0 = gl_WorkGroupID.y * 4 * blocks + 4 * q;
  const uint dst_base = gl_WorkGroupID.z * p.dst_batch + gl_WorkGroupID.y * k_groups * 4 * blocks + q;
  const uint g_begin = gl_WorkGroupID.x * p.chunk, g_end = min(k_groups, g_begin + p.chunk);
  if (g_begin >= g_end) return;
  // This invocation's 4 values of p are fixed; k walks from 4 * g_begin, the same in
  // every invocation (so its stepping is uniform).
  if (!kPixelsAlongK) {
    Pixel px[4];
    for (uint e = 0; e < 4; ++e) px[e] = pixel_of(pixel0 + min(p0 + e, p.pixel_count - 1));
    Column col = column_of(4 * g_begin, cg);
    for (uint g = g_begin; g < g_end; ++g) {
      vec4 rows[4];  // rows[s][e] = P[p0 + e][4g + s]
      if (kVector) {
        vec4 v[4];
        for (uint e = 0; e < 4; ++e) v[e] = load4(p0 + e < p.pixel_count ? offset_of(px[e], col, grp) : -1);
        for (uint s = 0; s < 4; ++s) rows[s] = vec4(v[0][s], v[1][s], v[2][s], v[3][s]);
        step_column(col, 4, cg);
      } else {
        for (uint s = 0; s < 4; ++s) {
          const bool in_k = 4 * g + s < cols;
          for (uint e = 0; e < 4; ++e)
            rows[s][e] = load(in_k && p0 + e < p.pixel_count ? offset_of(px[e], col, grp) : -1);
          step_column(col, 1, cg);
        }
      }
      for (uint s = 0; s < 4; ++s) dst[dst_base + (4 * g + s) * blocks] = rows[s];
    }
  } else {
    Column col[4];
    for (uint e = 0; e < 4; ++e) col[e] = column_of(min(p0 + e, cols - 1), cg);
    Pixel px = pixel_of(pixel0 + 4 * g_begin);
    for (uint g = g_begin; g < g_end; ++g) {
      vec4 rows[4];  // rows[s][e] = P[4g + s][p0 + e]
      for (uint s = 0; s < 4; ++s) {
        const bool in_k = pixel0 + 4 * g + s < pixel_end;
        if (kVector) {
          rows[s] = load4(in_k && p0 < cols ? offset_of(px, col[0], grp) : -1);
        } else {
          for (uint e = 0; e < 4; ++e) rows[s][e] = load(in_k && p0 + e < cols ? offset_of(px, col[e], grp) : -1);
        }
        step_pixel(px);
      }
      for (uint s = 0; s < 4; ++s) dst[dst_base + (4 * g + s) * blocks] = rows[s];
    }
  }
}
