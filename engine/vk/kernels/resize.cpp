#include "engine/vk/kernels/resize.h"

#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint64_t input_elements(const ResizePush& g) { return std::uint64_t{g.n} * g.h * g.w * g.c; }
std::uint64_t output_elements(const ResizePush& g) { return std::uint64_t{g.n} * g.oh * g.ow * g.c; }

}  // namespace

void resize(Recording& recording, ResizeKind kind, const ResizePush& geometry, const BufferSlice& x,
            const BufferSlice& y) {
  require_elements(x, input_elements(geometry), "resize", "x");
  require_elements(y, output_elements(geometry), "resize", "y");
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::resize, {{0, static_cast<std::uint32_t>(kind)}, {1, 0}});
  recording.dispatch(kernel, {x, y}, geometry, grid_1d((output_elements(geometry) + 63) / 64, device), "resize");
}

void resize_grad(Recording& recording, ResizeKind kind, const ResizePush& geometry, const BufferSlice& dy,
                 const BufferSlice& dx) {
  require_elements(dy, output_elements(geometry), "resize_grad", "dy");
  require_elements(dx, input_elements(geometry), "resize_grad", "dx");
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::resize, {{0, static_cast<std::uint32_t>(kind)}, {1, 1}});
  recording.dispatch(kernel, {dy, dx}, geometry, grid_1d((input_elements(geometry) + 63) / 64, device),
                     "resize_grad");
}

}  // namespace vkp::vk
