// Resampling NHWC images (nearest, bilinear), and its gradient. Kernel: resize.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/resize.comp.
struct ResizePush {
  std::uint32_t n, h, w, c;
  std::uint32_t oh, ow;
  float scale_h, scale_w;  // in / out, as float: the sampling positions every user computes alike
};
static_assert(sizeof(ResizePush) == 32);

enum class ResizeKind : std::uint32_t { nearest, bilinear };

// y [N, OH, OW, C] = resize(x [N, H, W, C]).
void resize(Recording& recording, ResizeKind kind, const ResizePush& geometry, const BufferSlice& x,
            const BufferSlice& y);
// dx [N, H, W, C] from dy [N, OH, OW, C].
void resize_grad(Recording& recording, ResizeKind kind, const ResizePush& geometry, const BufferSlice& dy,
                 const BufferSlice& dx);

}  // namespace vkp::vk
