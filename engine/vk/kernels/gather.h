// Gathering rows of a table by index (embedding lookup) and its gradient, a
// deterministic segment sum. Kernel: gather.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant block of shaders/gather.comp: a table [outer, rows, inner]
// and `count` indices.
struct GatherPush {
  std::uint32_t outer, rows, inner, count;
};
static_assert(sizeof(GatherPush) == 16);

// out [outer, count, inner] = table[:, indices, :]; NaN rows for indices outside [0, rows).
void gather(Recording& recording, const GatherPush& geometry, const BufferSlice& table, const BufferSlice& indices,
            const BufferSlice& out);
// dtable [outer, rows, inner]: row r the sum, in index order, of the rows of dy
// [outer, count, inner] whose index is r (zero for rows no index names, and indices
// outside [0, rows) add to none). Both variants compute the same float32 sums.
void gather_grad(Recording& recording, const GatherPush& geometry, const BufferSlice& dy, const BufferSlice& indices,
                 const BufferSlice& dtable, KernelChoice choice = KernelChoice::automatic);

}  // namespace vkp::vk
