// Pooling over NHWC images, and its gradient. Kernel: pool.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/pool.comp.
struct PoolPush {
  std::uint32_t n, h, w, c;
  std::uint32_t oh, ow;
  std::uint32_t kh, kw;
  std::uint32_t stride_h, stride_w;
  std::uint32_t pad_top, pad_left;
};
static_assert(sizeof(PoolPush) == 48 && offsetof(PoolPush, oh) == 16);

enum class PoolMode : std::uint32_t { max, avg };

// y = pool(x): x [N, H, W, C], y [N, OH, OW, C].
void pool(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x, const BufferSlice& y);
// dx = d pool / dx applied to dy; x is needed by max (which element won).
void pool_grad(Recording& recording, PoolMode mode, const PoolPush& geometry, const BufferSlice& x,
               const BufferSlice& dy, const BufferSlice& dx);

}  // namespace vkp::vk
