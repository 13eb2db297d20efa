#include "engine/vk/kernels/conv.h"

#include <algorithm>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {

std::uint64_t im2col_elements(const ConvPush& g) {
  return std::uint64_t{g.n} * g.oh * g.ow * g.kh * g.kw * g.c;
}

namespace {

// Channels per invocation: whole vec4s when every group's channel run is 4-aligned.
std::uint32_t width_of(const ConvPush& g, const BufferSlice& a, const BufferSlice& b) {
  return (g.c / g.groups) % 4 == 0 && a.offset % 16 == 0 && b.offset % 16 == 0 ? 4 : 1;
}

}  // namespace

void im2col(Recording& recording, const ConvPush& geometry, const BufferSlice& x, const BufferSlice& col,
            bool transposed) {
  require_elements(x, std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c, "im2col", "x");
  require_elements(col, im2col_elements(geometry), "im2col", "col");
  // Transposed, col is written a float at a time: only x needs vec4 alignment.
  const std::uint32_t width = width_of(geometry, x, transposed ? x : col);
  const std::uint64_t items = im2col_elements(geometry) / width;
  if (items == 0) return;
  if (im2col_elements(geometry) > UINT32_MAX)
    throw Error(ErrorCode::unsupported, "im2col: " + std::to_string(im2col_elements(geometry)) + " elements exceed 2^32");
  Device& device = recording.device();
  const BufferSlice bindings[] = {x, col};
  // x's loads differ across the lanes: a texel buffer where it can be one.
  recording.dispatch(
      storage_kernel(device, {shaders::im2col, shaders::im2col_texel, shaders::im2col_f16, shaders::im2col_texel_f16},
                     0b01, bindings, {{0, width}, {1, transposed ? 1u : 0u}}, 0b01),
      bindings, geometry, grid_1d((items + 63) / 64, device), transposed ? "im2col_t" : "im2col");
}

void col2im(Recording& recording, const ConvPush& geometry, const BufferSlice& col, const BufferSlice& dx) {
  const std::uint64_t n = std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c;
  require_elements(col, im2col_elements(geometry), "col2im", "col");
  require_elements(dx, n, "col2im", "dx");
  const std::uint32_t width = width_of(geometry, col, dx);
  Device& device = recording.device();
  const BufferSlice bindings[] = {col, dx};
  recording.dispatch(
      storage_kernel(device, {shaders::col2im, shaders::col2im_texel, shaders::col2im_f16, shaders::col2im_texel_f16},
                     0b01, bindings, {{0, width}}, 0b10),
      bindings, geometry, grid_1d((n / width + 63) / 64, device), "col2im");
}

}  // namespace vkp::vk
