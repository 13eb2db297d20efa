// Kernels only training uses: dropout masks and fused optimizer updates. Both read the
// session's scalar buffer (run counter, global step, hyperparameters) so that what
// changes per step is never baked into a recording. Kernels: dropout, optimizer.
#pragma once

#include <cstdint>

#include "engine/vk/kernels/launch.h"
#include "shaders/op_codes.h"

namespace vkp::vk {

using shaders::UpdateRule;  // shaders/op_codes.h: the rules optimizer.comp implements

// Mirrors the push-constant block of shaders/dropout.comp.
struct DropoutPush {
  std::uint32_t n;
  float rate, scale;
  std::uint32_t key;
  std::uint32_t seed_lo, seed_hi;
};
static_assert(sizeof(DropoutPush) == 24);

// Which elements a dropout keeps: a fraction 1 - rate, drawn from (seed, key, the run
// counter scalars[1], the global step).
struct DropoutMask {
  float rate = 0;
  std::uint32_t key = 0;
  std::uint64_t seed = 0;
};
// y = x * mask / (1 - rate) over `n` elements.
void dropout(Recording& recording, std::uint64_t n, const DropoutMask& mask, const BufferSlice& x,
             const BufferSlice& scalars, const BufferSlice& y);

// Mirrors the push-constant block of shaders/optimizer.comp.
struct OptimizerPush {
  std::uint32_t n;
  std::uint32_t lr, momentum, beta2, epsilon, weight_decay, step_factor;
};
static_assert(sizeof(OptimizerPush) == 28);

// One in-place update of `var` from `grad`; slot1/slot2 are the rule's state (bind var
// for rules that have none). Hyperparameters at the word offsets of `push`. With a
// `guard` (two floats: a count of non-finite gradient elements, and a factor), the
// update is skipped when the count is not 0 and otherwise uses grad * factor (dynamic
// loss scaling: the factor is 1 / the loss scale).
struct OptimizerSlices {
  BufferSlice var, grad, slot1, slot2;
  BufferSlice scalars;  // the step's scalar buffer, where the hyperparameters are
  BufferSlice guard;    // empty: no guard
};
void optimizer_update(Recording& recording, UpdateRule rule, const OptimizerPush& push, const OptimizerSlices& slices);

}  // namespace vkp::vk
