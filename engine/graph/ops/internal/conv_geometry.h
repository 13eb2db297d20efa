// The geometry shared by convolution and pooling over NHWC images: output extents and
// padding as TensorFlow computes them.
#pragma once

#include <array>
#include <cstdint>

#include "engine/graph/attrs.h"

namespace vkp::graph::detail {

// One spatial axis: SAME gives ceil(in / stride) outputs, padded as evenly as possible
// (the extra pixel after); VALID gives the outputs whose windows fit. kUnknown in, out.
std::int64_t conv_out_extent(std::int64_t in, std::int64_t window, std::int64_t stride, std::int64_t dilation,
                             Padding padding);
std::int64_t conv_pad_before(std::int64_t in, std::int64_t out, std::int64_t window, std::int64_t stride,
                             std::int64_t dilation, Padding padding);

struct ConvGeometry {
  std::int64_t n, h, w, c;       // input
  std::int64_t oh, ow, cout;     // output
  std::int64_t kh, kw;           // window
  std::int64_t sh, sw, dh, dw;   // strides, dilations
  std::int64_t pad_top, pad_left;
  std::int64_t groups;
  std::int64_t cg() const { return c / groups; }              // input channels per group
  std::int64_t coutg() const { return cout / groups; }        // output channels per group
  std::int64_t k() const { return kh * kw * cg(); }           // im2col columns per group
  std::int64_t rows() const { return n * oh * ow; }           // im2col rows
  // 1x1, stride 1, no padding: the input is its own im2col matrix.
  bool pointwise() const { return kh == 1 && kw == 1 && sh == 1 && sw == 1 && pad_top == 0 && pad_left == 0; }
};

// From the input [N, H, W, C], filter [KH, KW, C / groups, Cout] and attributes.
ConvGeometry conv_geometry(const Conv2DAttrs& attrs, const std::array<std::int64_t, 4>& input,
                           const std::array<std::int64_t, 4>& filter);

}  // namespace vkp::graph::detail
