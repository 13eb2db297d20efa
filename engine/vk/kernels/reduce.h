// Reductions: sum, mean and max over one axis or over all axes, f32, in a fixed order
// (deterministic: no atomics). Kernels: reduce (sequential per output), reduce_rows
// (one workgroup per output, GPUs, contiguous axis).
#pragma once

#include <cstddef>
#include <cstdint>

#include "core/shape.h"
#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// argmax writes the i32 index (along the axis) of the first maximum; it always takes
// one pass of the sequential kernel. count_nonfinite counts the elements that are inf or
// NaN (mixed precision's overflow check).
enum class ReduceOp { sum, mean, max, argmax, count_nonfinite };

// Mirrors the push-constant block of shaders/reduce.comp and reduce_rows.comp.
struct ReducePush {
  std::uint32_t outer, axis, inner;
  std::uint32_t chunk;
  float scale;
};
static_assert(sizeof(ReducePush) == 20 && offsetof(ReducePush, chunk) == 12);

// The input seen as [outer, axis, inner], reduced over the middle: output [outer, inner].
struct ReduceArgs {
  ReduceOp op = ReduceOp::sum;
  std::uint32_t outer = 1, axis = 1, inner = 1;
  KernelChoice choice = KernelChoice::automatic;
};

// Over axis `axis` of `shape` (negative counts from the end); Error on a bad axis or
// an empty axis with max, mean or argmax.
ReduceArgs reduce_axis_args(ReduceOp op, const Shape& shape, int axis);
// Over every element of `shape`; the output has one element.
ReduceArgs reduce_all_args(ReduceOp op, const Shape& shape);

// Bytes of scratch memory reduce() needs for these arguments (0 when it takes one pass).
std::size_t reduce_workspace_bytes(const ReduceArgs& args, const Device& device);

// y = reduce(x); `workspace` holds at least reduce_workspace_bytes(args) bytes (it may be
// an empty slice when that is 0).
void reduce(Recording& recording, const ReduceArgs& args, const BufferSlice& x, const BufferSlice& y,
            const BufferSlice& workspace);

}  // namespace vkp::vk
