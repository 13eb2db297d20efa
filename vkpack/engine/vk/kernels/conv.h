// The data movement of convolutions: im2col (patches as matrix rows, for the GEMM of
// the forward pass and of the filter gradient) and col2im (its adjoint, for the input
// gradient); and implicit-GEMM convolution, which reads the patches through the
// convolution's index map instead of an im2col matrix.
// Kernels: im2col, col2im, conv_pack (with gemm_regblock), conv_tiled.
#pragma once

#include <cstddef>
#include <cstdint>

#include "vkpack/engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/conv.glsl.
struct ConvPush {
  std::uint32_t n, h, w, c;
  std::uint32_t oh, ow;
  std::uint32_t kh, kw;
  std::uint32_t stride_h, stride_w;
  std::uint32_t dilation_h, dilation_w;
  std::uint32_t pad_top, pad_left;
  std::uint32_t groups;
};
static_assert(sizeof(ConvPush) == 60 && offsetof(ConvPush, oh) == 16 && offsetof(ConvPush, groups) == 56);

// Mirrors the push-constant block of shaders/conv_tiled.comp: conv_pack's geometry and
// the GEMM's shape and strides.
struct ConvTiledPush {
  std::uint32_t n, h, w, c, oh, ow, kh, kw, stride_h, stride_w;
  std::int32_t dilation_h, dilation_w, pad_top, pad_left;
  std::uint32_t groups;
  std::uint32_t m, cols, k;
  std::uint32_t ldb, ldc;
  std::uint32_t stride_b, stride_c;
};
static_assert(sizeof(ConvTiledPush) == 88 && offsetof(ConvTiledPush, m) == 60);

// Mirrors the push-constant block of shaders/conv_pack.comp: a ConvPush whose
// dilations and padding may be negative, and the packing's layout.
struct ConvPackPush {
  std::uint32_t n, h, w, c;
  std::uint32_t oh, ow;
  std::uint32_t kh, kw;
  std::uint32_t stride_h, stride_w;
  std::int32_t dilation_h, dilation_w;
  std::int32_t pad_top, pad_left;
  std::uint32_t groups;
  std::uint32_t dst_batch;  // vec4s of one packed batch
  std::uint32_t chunk;      // runs of 4 k per workgroup
  std::uint32_t k_split;    // filter gradient: pixels per packed batch
};
static_assert(sizeof(ConvPackPush) == 72 && offsetof(ConvPackPush, dilation_h) == 40 &&
              offsetof(ConvPackPush, dst_batch) == 60 && offsetof(ConvPackPush, k_split) == 68);

// The three products of a convolution (x [N, H, W, C], w and dw [KH, KW, C / groups,
// Cout], out and dy [N, OH, OW, Cout]) as implicit GEMMs:
//   forward:         out = conv(x, w)     as out^T = w^T . P(x)^T, per group
//   filter_gradient: dw = P(x)^T . dy     as dw^T = dy^T . P(x), per group
//   input_gradient:  dx = P'(dy) . w'^T   as dx^T = w' . P'(dy)^T, where P' is the
//                    patch matrix of the adjoint convolution (taps mirrored: y = oy -
//                    i * dilation + pad) and w' is w with its channel axes swapped
//                    (written to the workspace); one group and stride 1 only.
// On CPU devices P is packed straight from the image into gemm_regblock's panels
// (conv_pack); on GPUs conv_tiled reads it through the index map into its shared-memory
// tiles. Either way no im2col matrix is written, read back or summed (col2im). The filter gradient of one
// group, a small product over many pixels, is split along the pixels into partial
// sums that a reduction adds in a fixed order (split K: enough workgroups without
// shrinking the GEMM's blocking).
enum class ConvProduct { forward, filter_gradient, input_gradient };

// Whether implicit_conv computes this product (the input gradient needs one group and
// stride 1).
bool implicit_conv_supports(const ConvPush& geometry, ConvProduct product);

// Bytes of workspace implicit_conv() needs.
std::uint64_t implicit_conv_workspace_bytes(const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                                            const Device& device, KernelChoice choice = KernelChoice::automatic);

// Records the product; the result (out, dw or dx) is written, not accumulated.
// `image` is x (forward, filter gradient) or dy (input gradient); `operand` is w
// (forward, input gradient) or dy (filter gradient).
void implicit_conv(Recording& recording, const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                   const BufferSlice& image, const BufferSlice& operand, const BufferSlice& result,
                   const BufferSlice& workspace, KernelChoice choice = KernelChoice::automatic);

// Floats of the im2col matrix: N*OH*OW rows of groups * KH*KW*(C/groups).
std::uint64_t im2col_elements(const ConvPush& g);

// col = im2col(x); x is [N, H, W, C]. `transposed`: col^T, [groups * KH*KW*C/groups,
// N*OH*OW] (for the filter gradient).
void im2col(Recording& recording, const ConvPush& geometry, const BufferSlice& x, const BufferSlice& col,
            bool transposed = false);
// dx = col2im(col), every entry summed onto its pixel in a fixed order.
void col2im(Recording& recording, const ConvPush& geometry, const BufferSlice& col, const BufferSlice& dx);

}  // namespace vkp::vk
