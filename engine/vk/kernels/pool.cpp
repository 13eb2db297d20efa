#include "vkpack/engine/vk/kernels/pool.h"

#include <initializer_list>

#include "vkpack/shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint64_t input_elements(const PoolPush& g) { return std::uint64_t{g.n} * g.h * g.w * g.c; }
std::uint64_t output_elements(const PoolPush& g) { return std::uint64_t{g.n} * g.oh * g.ow * g.c; }

// Channels per invocation: whole vec4s when channels come in fours.
std::uint32_t width_of(const PoolPush& g, std::initializer_list<BufferSlice> slices) {
  for (const BufferSlice& s : slices)
    if (s.offset % 16 != 0) return 1;
  return g.c % 4 == 0 ? 4 : 1;
}

}  // namespace

void pool(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x, const BufferSlice& y) {
  require_elements(x, input_elements(geometry), "pool", "x");
  require_elements(y, output_elements(geometry), "pool", "y");
  Device& device = recording.device();
  const std::uint32_t width = width_of(geometry, {x, y});
  const Kernel& kernel = device.kernel(shaders::pool, {{0, static_cast<std::uint32_t>(mode)}, {1, 0}, {2, width}});
  recording.dispatch(kernel, {x, x, y}, geometry, grid_1d((output_elements(geometry) / width + 63) / 64, device),
                     "pool");
}

void pool_grad(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x,
               const BufferSlice& dy, const BufferSlice& dx) {
  require_elements(x, input_elements(geometry), "pool_grad", "x");
  require_elements(dy, output_elements(geometry), "pool_grad", "dy");
  require_elements(dx, input_elements(geometry), "pool_grad", "dx");
  Device& device = recording.device();
  const std::uint32_t width = width_of(geometry, {x, dy, dx});
  const Kernel& kernel = device.kernel(shaders::pool, {{0, static_cast<std::uint32_t>(mode)}, {1, 1}, {2, width}});
  recording.dispatch(kernel, {x, dy, dx}, geometry, grid_1d((input_elements(geometry) / width + 63) / 64, device),
                     "pool_grad");
}

}  // namespace vkp::vk
