// Layer normalization over the last axis, and its input gradient. Kernel: layer_norm.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/layer_norm.comp.
struct LayerNormPush {
  std::uint32_t rows, cols;
  float epsilon;
};
static_assert(sizeof(LayerNormPush) == 12);

// xhat [rows, cols] = (x - mean) / sqrt(var + epsilon), per row (biased variance).
void layer_norm(Recording& recording, const LayerNormPush& shape, const BufferSlice& x, const BufferSlice& xhat);
// dx [rows, cols] from x and dxhat (the gradient of layer_norm's output).
void layer_norm_grad(Recording& recording, const LayerNormPush& shape, const BufferSlice& x, const BufferSlice& dxhat,
                     const BufferSlice& dx);

}  // namespace vkp::vk
