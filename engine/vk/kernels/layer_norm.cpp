#include "engine/vk/kernels/layer_norm.h"

#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

// x, then dy (x again forward; dxhat backward), then out.
struct LayerNormBuffers {
  BufferSlice x, dy, out;
};

void launch(Recording& recording, std::uint32_t grad, const LayerNormPush& shape, const LayerNormBuffers& buffers,
            const char* name) {
  const auto& [x, dy, out] = buffers;
  const std::uint64_t n = std::uint64_t{shape.rows} * shape.cols;
  require_elements(x, n, name, "x");
  require_elements(dy, n, name, grad ? "dxhat" : "x");
  require_elements(out, n, name, "out");
  Device& device = recording.device();
  const BufferSlice bindings[] = {x, dy, out};
  const Kernel& kernel =
      texel_kernel(device, shaders::layer_norm, shaders::layer_norm_texel, 0b011, bindings, {{0, grad}});
  recording.dispatch(kernel, bindings, shape, grid_1d((shape.rows + 63) / 64, device), name);
}

}  // namespace

void layer_norm(Recording& recording, const LayerNormPush& shape, const BufferSlice& x, const BufferSlice& xhat) {
  launch(recording, 0, shape, {x, x, xhat}, "layer_norm");
}

void layer_norm_grad(Recording& recording, const LayerNormPush& shape, const BufferSlice& x, const BufferSlice& dxhat,
                     const BufferSlice& dx) {
  launch(recording, 1, shape, {x, dxhat, dx}, "layer_norm_grad");
}

}  // namespace vkp::vk
