#include "vkpack/engine/vk/kernels/conv.h"

#include <algorithm>

#include "vkpack/core/error.h"
#include "vkpack/shaders/embedded.h"

namespace vkp::vk {

std::uint64_t im2col_elements(const ConvPush& g) {
  return std::uint64_t{g.n} * g.oh * g.ow * g.kh * g.kw * g.c;
}

void im2col(Recording& recording, const ConvPush& geometry, const BufferSlice& x, const BufferSlice& col) {
  require_elements(x, std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c, "im2col", "x");
  require_elements(col, im2col_elements(geometry), "im2col", "col");
  const std::uint64_t columns = std::uint64_t{geometry.kh} * geometry.kw * geometry.c;
  const std::uint64_t rows = std::uint64_t{geometry.n} * geometry.oh * geometry.ow;
  if (rows == 0 || columns == 0) return;
  Device& device = recording.device();
  // Rows over y, then z when there are more than y takes.
  const std::uint64_t y = std::min<std::uint64_t>(rows, device.limits().max_workgroup_count[1]);
  const std::uint64_t z = (rows + y - 1) / y;
  if (z > device.limits().max_workgroup_count[2])
    throw Error(ErrorCode::unsupported, "im2col: " + std::to_string(rows) + " output pixels exceed what " +
                                            device.label() + " launches");
  recording.dispatch(device.kernel(shaders::im2col), {x, col}, geometry,
                     {static_cast<std::uint32_t>((columns + 63) / 64), static_cast<std::uint32_t>(y),
                      static_cast<std::uint32_t>(z)},
                     "im2col");
}

void col2im(Recording& recording, const ConvPush& geometry, const BufferSlice& col, const BufferSlice& dx) {
  const std::uint64_t n = std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c;
  require_elements(col, im2col_elements(geometry), "col2im", "col");
  require_elements(dx, n, "col2im", "dx");
  Device& device = recording.device();
  recording.dispatch(device.kernel(shaders::col2im), {col, dx}, geometry, grid_1d((n + 63) / 64, device), "col2im");
}

}  // namespace vkp::vk
