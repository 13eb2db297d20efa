#include "engine/vk/kernels/pool.h"

#include <initializer_list>

#include "shaders/embedded.h"

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

// Whether the windows tile the input: every input item in exactly one window.
bool windows_tile(const PoolPush& g) {
  return g.stride_h == g.kh && g.stride_w == g.kw && g.pad_top == 0 && g.pad_left == 0 && g.h == g.oh * g.kh &&
         g.w == g.ow * g.kw;
}

}  // namespace

void pool(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x, const BufferSlice& y) {
  require_elements(x, input_elements(geometry), "pool", "x");
  require_elements(y, output_elements(geometry), "pool", "y");
  Device& device = recording.device();
  const std::uint32_t width = width_of(geometry, {x, y});
  const BufferSlice bindings[] = {x, x, y};
  const Kernel& kernel =
      storage_kernel(device, {shaders::pool, shaders::pool_texel, shaders::pool_f16, shaders::pool_texel_f16}, 0b011,
                     bindings, {{0, static_cast<std::uint32_t>(mode)}, {1, 0}, {2, width}});
  recording.dispatch(kernel, bindings, geometry, grid_1d((output_elements(geometry) / width + 63) / 64, device), "pool");
}

void pool_grad(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x,
               const BufferSlice& dy, const BufferSlice& dx) {
  require_elements(x, input_elements(geometry), "pool_grad", "x");
  require_elements(dy, output_elements(geometry), "pool_grad", "dy");
  require_elements(dx, input_elements(geometry), "pool_grad", "dx");
  Device& device = recording.device();
  const std::uint32_t width = width_of(geometry, {x, dy, dx});
  // Tiling windows: one invocation per window, which finds its maximum once, instead of
  // one per input item, which finds the maximum of every window that covers it.
  const bool tiled = windows_tile(geometry);
  const BufferSlice bindings[] = {x, dy, dx};
  const Kernel& kernel =
      storage_kernel(device, {shaders::pool, shaders::pool_texel, shaders::pool_f16, shaders::pool_texel_f16}, 0b011,
                     bindings, {{0, static_cast<std::uint32_t>(mode)}, {1, tiled ? 2u : 1u}, {2, width}});
  const std::uint64_t items = tiled ? output_elements(geometry) : input_elements(geometry);
  recording.dispatch(kernel, bindings, geometry, grid_1d((items / width + 63) / 64, device), "pool_grad");
}

}  // namespace vkp::vk
