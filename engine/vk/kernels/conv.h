// The data movement of convolutions: im2col (patches as matrix rows, for the GEMM of
// the forward pass and of the filter gradient) and col2im (its adjoint, for the input
// gradient), where implicit GEMM (implicit_conv.h) does not apply. Kernels: im2col,
// col2im.
#pragma once

#include <cstddef>
#include <cstdint>

#include "engine/vk/kernels/launch.h"

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

// Floats of the im2col matrix: N*OH*OW rows of groups * KH*KW*(C/groups).
std::uint64_t im2col_elements(const ConvPush& g);

// col = im2col(x); x is [N, H, W, C]. `transposed`: col^T, [groups * KH*KW*C/groups,
// N*OH*OW] (for the filter gradient).
void im2col(Recording& recording, const ConvPush& geometry, const BufferSlice& x, const BufferSlice& col,
            bool transposed = false);
// dx = col2im(col), every entry summed onto its pixel in a fixed order.
void col2im(Recording& recording, const ConvPush& geometry, const BufferSlice& col, const BufferSlice& dx);

}  // namespace vkp::vk
