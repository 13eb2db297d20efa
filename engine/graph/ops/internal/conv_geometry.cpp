#include "engine/graph/ops/internal/conv_geometry.h"

#include <algorithm>

namespace vkp::graph::detail {

std::int64_t conv_out_extent(std::int64_t in, std::int64_t window, std::int64_t stride, std::int64_t dilation,
                             Padding padding) {
  if (in < 0) return kUnknown;
  const std::int64_t span = (window - 1) * dilation + 1;
  if (padding == Padding::same) return (in + stride - 1) / stride;
  return in < span ? 0 : (in - span) / stride + 1;
}

std::int64_t conv_pad_before(std::int64_t in, std::int64_t out, std::int64_t window, std::int64_t stride,
                             std::int64_t dilation, Padding padding) {
  if (padding == Padding::valid) return 0;
  const std::int64_t span = (window - 1) * dilation + 1;
  return std::max<std::int64_t>((out - 1) * stride + span - in, 0) / 2;
}

ConvGeometry conv_geometry(const Conv2DAttrs& a, const std::array<std::int64_t, 4>& input,
                           const std::array<std::int64_t, 4>& filter) {
  ConvGeometry g{};
  g.n = input[0];
  g.h = input[1];
  g.w = input[2];
  g.c = input[3];
  g.kh = filter[0];
  g.kw = filter[1];
  g.cout = filter[3];
  g.sh = a.strides[0];
  g.sw = a.strides[1];
  g.dh = a.dilations[0];
  g.dw = a.dilations[1];
  g.groups = a.groups;
  g.oh = conv_out_extent(g.h, g.kh, g.sh, g.dh, a.padding);
  g.ow = conv_out_extent(g.w, g.kw, g.sw, g.dw, a.padding);
  g.pad_top = conv_pad_before(g.h, g.oh, g.kh, g.sh, g.dh, a.padding);
  g.pad_left = conv_pad_before(g.w, g.ow, g.kw, g.sw, g.dw, a.padding);
  return g;
}

}  // namespace vkp::graph::detail
