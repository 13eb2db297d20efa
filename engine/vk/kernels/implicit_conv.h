// Implicit-GEMM convolution: the three products of a convolution (x [N, H, W, C], w and
// dw [KH, KW, C / groups, Cout], out and dy [N, OH, OW, Cout]) as GEMMs whose patch
// operand P (P[pixel][(i * kw + j) * cg + ch], 0 where the tap is padding) is read
// through the convolution's index map instead of an im2col matrix:
//   forward:         out = P(x) . w     (on CPU devices as out^T = w^T . P^T), per group
//   filter_gradient: dw = P(x)^T . dy   (on CPU devices as dw^T = dy^T . P), per group
//   input_gradient:  dx = P'(dy) . w'   where P' is the patch matrix of the adjoint
//                    convolution (taps mirrored: y = oy - i * dilation + pad) and w'
//                    [taps][cout][c] is w with its channel axes swapped (written to the
//                    workspace); one group and stride 1, except on CPU devices
//                    reading in place (below), where strided too.
// CPU devices: with one group, conv_regblock reads P from the image inside the
// blocked product (a strided input gradient phase by phase), the image and operand
// through texel buffers where both can be texel views, else as storage buffers; else
// (groups, or a filter gradient with cout not in runs of 4) conv_pack packs P into
// gemm_regblock's panels, a
// chunk of pixels at a time (the workspace stays under kPackedChunkBytes whatever the
// batch). The filter gradient, a small product over many pixels, is cut along the
// pixels into partial sums that a reduction adds in a fixed order. GPUs: conv_tiled
// stages P through the index map in gemm_tiled's shared-memory tiles; its filter
// gradient (few tiles, K the pixels) is cut along K the same way, so that enough
// workgroups run at once; its tiling is measured per device where tuning is on.
// conv_coopmat computes the same products on the matrix units where both operands
// hold float16 (below).
// Kernels: conv_regblock, conv_pack, gemm_regblock, reduce (CPU); conv_tiled,
// conv_coopmat (GPU); transpose.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/vk/kernels/conv.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// The most bytes of packed patches a CPU device holds at once.
inline constexpr std::uint64_t kPackedChunkBytes = std::uint64_t{8} << 20;

// Mirrors the push-constant block of shaders/conv_pack.comp: the geometry (dilations
// and padding may be negative: the adjoint's map) and the packing's layout.
struct ConvPackPush {
  std::uint32_t n, h, w, c;
  std::uint32_t oh, ow;
  std::uint32_t kh, kw;
  std::uint32_t stride_h, stride_w;
  std::int32_t dilation_h, dilation_w;
  std::int32_t pad_top, pad_left;
  std::uint32_t groups;
  std::uint32_t dst_batch;     // vec4s of one packed batch
  std::uint32_t chunk;         // runs of 4 k per workgroup
  std::uint32_t k_split;       // filter gradient: pixels per packed batch
  std::uint32_t pixel_offset;  // the first output pixel of this chunk
  std::uint32_t pixel_count;   // output pixels in this chunk
};
static_assert(sizeof(ConvPackPush) == 80 && offsetof(ConvPackPush, dilation_h) == 40 &&
              offsetof(ConvPackPush, dst_batch) == 60 && offsetof(ConvPackPush, pixel_count) == 76);

// Mirrors the push-constant block of shaders/conv_regblock.comp: the product's shape
// and conv_pack's map (one group).
struct ConvRegblockPush {
  std::uint32_t m, n, k;
  std::uint32_t h, w, c;
  std::uint32_t oh, ow;
  std::uint32_t kw;
  std::uint32_t stride_h, stride_w;
  std::int32_t dilation_h, dilation_w;
  std::int32_t pad_top, pad_left;
  std::uint32_t bias_row, bias_col;
  float act_alpha, gate_alpha;
  std::uint32_t k_split;  // filter gradient: pixels per partial sum
  // One phase of a strided input gradient (shaders/conv_regblock.comp's kPhases).
  std::uint32_t phase_h, phase_w, phase_y, phase_x, tap_y, tap_x, taps_w, a_row;
};
static_assert(sizeof(ConvRegblockPush) == 112 && offsetof(ConvRegblockPush, dilation_h) == 44 &&
              offsetof(ConvRegblockPush, bias_row) == 60 && offsetof(ConvRegblockPush, k_split) == 76 &&
              offsetof(ConvRegblockPush, a_row) == 108);

// Mirrors the push-constant block of shaders/conv_tiled.comp and conv_coopmat.comp:
// conv_pack's geometry and the GEMM's shape and strides.
struct ConvTiledPush {
  std::uint32_t n, h, w, c, oh, ow, kh, kw, stride_h, stride_w;
  std::int32_t dilation_h, dilation_w, pad_top, pad_left;
  std::uint32_t groups;
  std::uint32_t m, cols, k;
  std::uint32_t ldb, ldc;
  std::uint32_t stride_b, stride_c;
  std::uint32_t bias_row, bias_col;  // the epilogue's (shaders/epilogue.glsl)
  float act_alpha, gate_alpha;
  std::uint32_t k_split;       // k of one split of K (k when unsplit)
  std::uint32_t split_stride;  // elements between the splits' partial sums
};
static_assert(sizeof(ConvTiledPush) == 112 && offsetof(ConvTiledPush, m) == 60 &&
              offsetof(ConvTiledPush, bias_row) == 88 && offsetof(ConvTiledPush, k_split) == 104);

enum class ConvProduct { forward, filter_gradient, input_gradient };

// Whether implicit_conv computes this product on any device (the input gradient needs
// one group and stride 1).
bool implicit_conv_supports(const ConvPush& geometry, ConvProduct product);
// Whether it does on `device` with KernelChoice::automatic: the above, and on a CPU
// device (conv_regblock) the strided input gradient too, with one group and cout a
// multiple of 4.
bool implicit_conv_supports(const ConvPush& geometry, std::uint32_t cout, ConvProduct product, const Device& device);

// Bytes of workspace implicit_conv() needs.
std::uint64_t implicit_conv_workspace_bytes(const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                                            const Device& device, KernelChoice choice = KernelChoice::automatic);

// One product of one convolution: what implicit_conv() computes.
struct ConvProblem {
  ConvPush geometry{};
  std::uint32_t cout = 0;
  ConvProduct product = ConvProduct::forward;
};
// What it reads and writes: `image` is x (forward, filter gradient) or dy (input
// gradient); `operand` is w (forward, input gradient) or dy (filter gradient); `result`
// is out, dw or dx; `workspace` holds implicit_conv_workspace_bytes().
struct ConvSlices {
  BufferSlice image, operand, result, workspace;
};

// Records the product; the result is written, not accumulated, through `epilogue` (GEMM
// epilogue: bias along the result's channels, residual or gate laid out as the result,
// activation); an epilogue needs one group and not the filter gradient.
void implicit_conv(Recording& recording, const ConvProblem& problem, const ConvSlices& slices,
                   KernelChoice choice = KernelChoice::automatic, const GemmEpilogue& epilogue = {});

// On GPUs the kernel and its tiling come from a fixed rule, or where the device tunes
// (vk::TuningCache) are measured once per shape class: the key below (product, rows,
// columns and K rounded up to powers of two, the operands' widths), its value a
// tiling's name. conv_tiled's tilings (128x16, 128x32, 64x64: conv_tiling_names()) run
// everywhere; conv_coopmat's (conv_coopmat_tiling_names()) on the matrix units, where
// the device has them (gemm's has_matrix_units) and image and operand both hold float16
// (their products are then exact in float32). The fixed rule: conv_coopmat where it may
// run, else conv_tiled, each with the tiling for the product's columns.
struct ConvWidths {
  bool image_f16 = false, operand_f16 = false;
};
std::string conv_tuning_key(const ConvPush& geometry, std::uint32_t cout, ConvProduct product, ConvWidths widths);
std::vector<std::string> conv_tiling_names();
// conv_coopmat's tilings on `device`: none without matrix units.
std::vector<std::string> conv_coopmat_tiling_names(const Device& device);

}  // namespace vkp::vk
