#version 450
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
// conv_regblock: the three products of a convolution as gemm_regblock's blocked
// product, with the patch matrix P read from the image through the convolution's
// index map, on CPU devices, in the _texel build: no packed copy of P (conv_pack's
// stores, each a loop over the SIMD lanes on lavapipe, were half of a ResNet step).
//
// The map is conv_pack's, one group: P[pixel][kk] = x[b][y][x][ch], kk = (i * kw + j)
// * c + ch, y = oy * stride_h + i * dilation_h - pad_top (likewise x; dilation and
// padding negative for the input gradient's map), 0 where (y, x) is outside the image.
// Where c is a multiple of 4, 4 consecutive kk are 4 channels of one tap: one vec4
// fetch (else kScalar: one fetch each).
// Rows of C belong to the workgroup, columns to lanes (4 consecutive, kCols times):
//   kPixelsAlongK false (forward pass, input gradient): C^T = X . P^T, columns are
//     pixels, X = w^T [m][k] read one vec4 per 4 k; each lane fetches a vec4 of 4
//     channels per pixel and transposes them in registers (gemm_regblock's kBMode 2).
//     C [n pixels][m], element (r, pixel) at pixel * m + r; the epilogue's bias along r.
//     A strided input gradient runs phase by phase (kPhases: no tap wasted), with
//     dilation every tap masked (kMasked: 3 in 4 miss dy's grid at stride 2); either
//     writes dx directly, where im2col's path runs a GEMM and col2im.
//   kPixelsAlongK true (filter gradient): C = dy^T . P, columns are patch columns, k
//     runs over the pixels [z * k_split, (z + 1) * k_split) of split z, X = dy [k][m]
//     read as vec4s of 4 rows and transposed; P's row at one pixel is a vec4 per lane.
//     C: split z's partial sum of dw [n][m] at z * n * m + col * m + r.
// Along k, m is a multiple of 4; without kScalar, so is k (n along k). X's slice and
// the image are 16-byte aligned. Launch: (ceil(n / (lanes * 4 * kCols)), ceil(m / kRows), splits). Push
// constants mirror vkp::vk::ConvRegblockPush.
layout(local_size_x_id = 0) in;  // lanes
layout(constant_id = 1) const uint kRows = 16;
layout(constant_id = 2) const uint kCols = 4;
layout(constant_id = 3) const bool kPixelsAlongK = false;
// The input gradient of a strided convolution: its map (stride 1) reaches dy's pixel
// (y / kInStrideH, x / kInStrideW) where y and x are multiples of the strides, else 0.
layout(constant_id = 4) const uint kInStrideH = 1;
layout(constant_id = 5) const uint kInStrideW = 1;
// One phase of such an input gradient (dilation 1): the pixels of dx with y % kInStrideH
// == phase_y and x % kInStrideW == phase_x, every one reached by the same taps,
// (tap_y, tap_x) and every kInStride-th after it, so none is wasted. The map is then
// the phase's: dy's pixel (Y0 - a, X0 - c) under its tap (a, c), Y0 = (y + pad -
// tap_y) / kInStrideH (pushed as dilation -1 and kw = the phase's taps per row).
layout(constant_id = 6) const bool kPhases = false;
// Strided, every tap masked (kPhases implies strides; no && or ||: glslang lowers them
// to branches, which spirv-opt then breaks for a specialization constant).
const bool kMasked = (kInStrideH * kInStrideW != 1u) != kPhases;
// c not a multiple of 4 (an image's 1 or 3 channels): k one patch column at a time,
// scalar fetches of the image, X read as scalars (its rows need not be aligned).
layout(constant_id = 7) const bool kScalar = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, A, a)      // X: w^T, or dy along k
VKP_TEXEL_INPUT4(1, Image, x)  // the image [N, H, W, C]
VKP_OUTPUT(2, C, c)
layout(push_constant) uniform Push {
  uint m, n, k;                // rows of C; pixels and patch columns, or along k the reverse
  uint h, w, ch;               // the image's extents
  uint oh, ow;                 // output pixels per image row and column
  uint kw;                     // taps per window row
  uint stride_h, stride_w;
  int dilation_h, dilation_w;  // negative, with negative padding: the input gradient's map
  int pad_top, pad_left;
  uint bias_row, bias_col;     // the epilogue's (epilogue.glsl)
  float act_alpha, gate_alpha;
  uint k_split;                // along k: pixels per split
  uint phase_h, phase_w;       // kPhases: the phase's pixels per image column and row,
  uint phase_y, phase_x;       //   its first pixel in dx,
  uint tap_y, tap_x;           //   its first tap in w,
  uint taps_w, a_row;          //   w's taps per row, and X's row length (k is the phase's)
} p;

#include "epilogue.glsl"

vec4 acc[kRows][kCols];
uint pixel_of[kCols][4];  // kPhases: the pixel of dx that each column of C is

// Patch column (tap ti, tj; channel ch) and pixel (b, oy, ox) stepped without dividing
// (integer division is a loop over the lanes on a CPU device).
void step_column(inout uint ti, inout uint tj, inout uint ch, uint by) {
  ch += by;
  if (ch == p.ch) {
    ch = 0;
    if (++tj == p.kw) {
      tj = 0;
      ++ti;
    }
  }
}

void step_pixel(inout uint b, inout uint oy, inout uint ox, uint rows, uint cols) {
  if (++ox == cols) {
    ox = 0;
    if (++oy == rows) {
      oy = 0;
      ++b;
    }
  }
}

// kScalar's loop of pixels_along_n: 4 steps of k are 4 patch columns (kk, ch + 1, ...)
// of any taps, each a scalar fetch per pixel; past K, zeros (and X is not read there).
void scalar_columns_along_k(int y0[kCols][4], int x0[kCols][4], int base[kCols][4], uint at_a[kRows]) {
  uint ti = 0, tj = 0, ch = 0;
  for (uint g = 0; g < (p.k + 3) / 4; ++g) {
    vec4 bv[4][kCols];  // bv[s][j]: this lane's 4 pixels of run j at k = 4 g + s
    for (uint s = 0; s < 4; ++s) {
      const bool live = 4 * g + s < p.k;
      const int dy = int(ti) * p.dilation_h, dx = int(tj) * p.dilation_w;
      const int shift = (dy * int(p.w) + dx) * int(p.ch) + int(ch);
      for (uint j = 0; j < kCols; ++j)
        for (uint e = 0; e < 4; ++e) {
          const bool inside = live && uint(y0[j][e] + dy) < p.h && uint(x0[j][e] + dx) < p.w;
          const float t = load_x(uint(inside ? base[j][e] + shift : 0));
          bv[s][j][e] = inside ? t : 0.0;
        }
      step_column(ti, tj, ch, 1);
    }
    for (uint i = 0; i < kRows; ++i) {
      vec4 av;
      for (uint s = 0; s < 4; ++s) {
        const float a = load_a(at_a[i] + min(4 * g + s, p.k - 1));
        av[s] = 4 * g + s < p.k ? a : 0.0;
      }
      for (uint j = 0; j < kCols; ++j)
        acc[i][j] += av.x * bv[0][j] + av.y * bv[1][j] + av.z * bv[2][j] + av.w * bv[3][j];
    }
  }
}

// Pixels along the columns: the forward pass and the input gradient.
void pixels_along_n(uint row0, uint col0) {
  const uint lanes = gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  // Where each of this lane's pixels reads tap (0, 0): y0, x0 and the element offset of
  // channel 0 there (it may lie outside the image; a tap's shift brings it in), or with
  // strides, the image's first row b * h. Pixels past n repeat pixel n - 1 and are not
  // stored.
  const uint grid_h = kPhases ? p.phase_h : p.oh, grid_w = kPhases ? p.phase_w : p.ow;
  int y0[kCols][4], x0[kCols][4], base[kCols][4];
  for (uint j = 0; j < kCols; ++j) {
    const uint first = min(col0 + (j * lanes + lane) * 4, p.n - 1);
    uint b = first / (grid_h * grid_w), oy = first / grid_w % grid_h, ox = first % grid_w;
    for (uint e = 0; e < 4; ++e) {
      if (kPhases) {
        const uint y = p.phase_y + oy * kInStrideH, x = p.phase_x + ox * kInStrideW;
        y0[j][e] = (int(y) - p.pad_top - int(p.tap_y)) / int(kInStrideH);  // exact
        x0[j][e] = (int(x) - p.pad_left - int(p.tap_x)) / int(kInStrideW);
        pixel_of[j][e] = (b * p.oh + y) * p.ow + x;
      } else {
        y0[j][e] = int(oy * p.stride_h) - p.pad_top;
        x0[j][e] = int(ox * p.stride_w) - p.pad_left;
      }
      base[j][e] = kMasked ? int(b * p.h) : (int(b * p.h) * int(p.w) + y0[j][e] * int(p.w) + x0[j][e]) * int(p.ch);
      if (first + e + 1 < p.n) step_pixel(b, oy, ox, grid_h, grid_w);
    }
  }
  uint at_a[kRows];  // rows past m read row m - 1 and are not stored
  for (uint i = 0; i < kRows; ++i) at_a[i] = min(row0 + i, p.m - 1) * (kPhases ? p.a_row : p.k) / (kScalar ? 1 : 4);
  if (kScalar) {
    scalar_columns_along_k(y0, x0, base, at_a);
    return;
  }

  // The tap (ti, tj) and first channel ch0 of each 4 steps of k, stepped (the same in
  // every lane), so no division in the loop.
  uint ti = 0, tj = 0, ch0 = 0;
  for (uint g = 0; g < p.k / 4; ++g) {
    const int dy = int(ti) * p.dilation_h, dx = int(tj) * p.dilation_w;
    const int shift = (dy * int(p.w) + dx) * int(p.ch) + int(ch0);
    vec4 bv[4][kCols];  // bv[s][j]: this lane's 4 pixels of run j at k = 4 g + s
    for (uint j = 0; j < kCols; ++j) {
      vec4 v[4];
      for (uint e = 0; e < 4; ++e) {
        bool inside;
        int at;
        if (kMasked) {
          const uint y = uint(y0[j][e] + dy), x = uint(x0[j][e] + dx);  // huge where negative
          inside = y % kInStrideH == 0 && x % kInStrideW == 0 && y / kInStrideH < p.h && x / kInStrideW < p.w;
          at = ((base[j][e] + int(y / kInStrideH)) * int(p.w) + int(x / kInStrideW)) * int(p.ch) + int(ch0);
        } else {
          inside = uint(y0[j][e] + dy) < p.h && uint(x0[j][e] + dx) < p.w;
          at = base[j][e] + shift;
        }
        // Every lane fetches (a masked fetch costs more on a CPU device); outside, at 0.
        const vec4 t = load4_x(uint(inside ? at : 0) / 4);
        v[e] = inside ? t : vec4(0.0);
      }
      for (uint s = 0; s < 4; ++s) bv[s][j] = vec4(v[0][s], v[1][s], v[2][s], v[3][s]);
    }
    // X's 4 columns of this tap and channels: in a phase, of the tap it stands for.
    const uint a_at = kPhases ? ((p.tap_y + ti * kInStrideH) * p.taps_w + p.tap_x + tj * kInStrideW) * p.ch / 4 + ch0 / 4 : g;
    for (uint i = 0; i < kRows; ++i) {
      const vec4 av = load4_a(at_a[i] + a_at);
      for (uint j = 0; j < kCols; ++j)
        acc[i][j] += av.x * bv[0][j] + av.y * bv[1][j] + av.z * bv[2][j] + av.w * bv[3][j];
    }
    step_column(ti, tj, ch0, 4);
  }
}

// Pixels along k: the filter gradient, over split gl_WorkGroupID.z's pixels.
void pixels_along_k(uint row0, uint col0) {
  const uint lanes = gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  const uint begin = gl_WorkGroupID.z * p.k_split, end = min(p.k, begin + p.k_split);
  // Each run of this lane's columns is 4 channels of one tap: its offset from the
  // pixel's tap (0, 0). Columns past n repeat the last 4 and are not stored.
  // kScalar: each of the 4 columns its own tap and channel.
  int dy[kCols][4], dx[kCols][4], shift[kCols][4];
  for (uint j = 0; j < kCols; ++j)
    for (uint e = 0; e < (kScalar ? 4 : 1); ++e) {
      const uint col = kScalar ? min(col0 + (j * lanes + lane) * 4 + e, p.n - 1)
                               : min(col0 + (j * lanes + lane) * 4, p.n - 4);
      const uint tap = col / p.ch;
      dy[j][e] = int(tap / p.kw) * p.dilation_h;
      dx[j][e] = int(tap % p.kw) * p.dilation_w;
      shift[j][e] = (dy[j][e] * int(p.w) + dx[j][e]) * int(p.ch) + int(col % p.ch);
    }
  // X = dy [k][m] as vec4s of 4 rows; rows past m read the last 4 and are not stored.
  const uint quads = kRows / 4;
  uint at_rows[kRows / 4];
  for (uint q = 0; q < quads; ++q) at_rows[q] = min(row0 + 4 * q, p.m - 4) / 4;

  // The pixel (b, oy, ox) of each step of k, stepped (the same in every lane).
  uint b = begin / (p.oh * p.ow), oy = begin / p.ow % p.oh, ox = begin % p.ow;
  for (uint k0 = begin; k0 < end; k0 += 4) {
    vec4 bv[4][kCols];     // bv[s][j]: P at pixel k0 + s, this lane's run j
    vec4 xv[4][kRows / 4];  // xv[s][q]: dy at pixel k0 + s, rows 4q..4q+3
    for (uint s = 0; s < 4; ++s) {
      const bool live = k0 + s < end;  // past the split: zeros, and dy is not read there
      const int y0 = int(oy * p.stride_h) - p.pad_top, x0 = int(ox * p.stride_w) - p.pad_left;
      const int base = ((int(b * p.h) + y0) * int(p.w) + x0) * int(p.ch);
      for (uint j = 0; j < kCols; ++j) {
        if (kScalar) {
          for (uint e = 0; e < 4; ++e) {
            const bool inside = live && uint(y0 + dy[j][e]) < p.h && uint(x0 + dx[j][e]) < p.w;
            const float t = load_x(uint(inside ? base + shift[j][e] : 0));
            bv[s][j][e] = inside ? t : 0.0;
          }
          continue;
        }
        const bool inside = live && uint(y0 + dy[j][0]) < p.h && uint(x0 + dx[j][0]) < p.w;
        const vec4 t = load4_x(uint(inside ? base + shift[j][0] : 0) / 4);
        bv[s][j] = inside ? t : vec4(0.0);
      }
      const uint pixel = live ? k0 + s : begin;
      for (uint q = 0; q < quads; ++q) {
        const vec4 t = load4_a(pixel * p.m / 4 + at_rows[q]);
        xv[s][q] = live ? t : vec4(0.0);
      }
      step_pixel(b, oy, ox, p.oh, p.ow);
    }
    for (uint i = 0; i < kRows; ++i) {
      const uint q = i / 4, r = i % 4;
      const vec4 av = vec4(xv[0][q][r], xv[1][q][r], xv[2][q][r], xv[3][q][r]);
      for (uint j = 0; j < kCols; ++j)
        acc[i][j] += av.x * bv[0][j] + av.y * bv[1][j] + av.z * bv[2][j] + av.w * bv[3][j];
    }
  }
}

void main() {
  const uint lanes = gl_WorkGroupSize.x, lane = gl_LocalInvocationID.x;
  const uint row0 = gl_WorkGroupID.y * kRows;
  const uint col0 = gl_WorkGroupID.x * lanes * 4 * kCols;
  for (uint i = 0; i < kRows; ++i)
    for (uint j = 0; j < kCols; ++j) acc[i][j] = vec4(0.0);
  if (kPixelsAlongK)
    pixels_along_k(row0, col0);
  else
    pixels_along_n(row0, col0);

  const uint base_c = gl_WorkGroupID.z * p.n * p.m;
  for (uint i = 0; i < kRows; ++i) {
    const uint row = row0 + i;
    if (row >= p.m) break;
    for (uint j = 0; j < kCols; ++j) {
      const uint col = col0 + (j * lanes + lane) * 4;
      for (uint e = 0; e < 4; ++e) {
        if (col + e >= p.n) break;
        const uint at = base_c + (kPhases ? pixel_of[j][e] : col + e) * p.m + row;
        store_c(at, epilogue(acc[i][j][e], row, col + e, at));
      }
    }
  }
}
