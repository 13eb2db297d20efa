// Conversions between element types: f32 <-> i32 and u8 -> f32 (images fed as bytes).
// Kernel: cast.
#pragma once

#include <cstdint>

#include "core/dtype.h"
#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/cast.comp.
struct CastPush {
  std::uint32_t n;
};
static_assert(sizeof(CastPush) == 4);

// dst[i] = to(src[i]) for n elements. Supported: f32 -> i32 (toward zero), i32 -> f32,
// u8 -> f32, and f32/i32 to themselves; Error(unsupported) for the rest.
void cast(Recording& recording, DType from, DType to, std::uint64_t n, const BufferSlice& src, const BufferSlice& dst);

}  // namespace vkp::vk
