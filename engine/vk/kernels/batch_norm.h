// Batch normalization over x viewed as [m, c] (channels last): per-channel statistics,
// the normalization, and its gradient, each a pass or two over x. Kernels:
// batch_norm_reduce (statistics, gradient sums; deterministic two-pass reductions),
// batch_norm (the elementwise passes).
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>

#include "engine/vk/kernels/launch.h"

namespace vkp::vk {

// Mirrors the push-constant blocks of shaders/batch_norm_reduce.comp and batch_norm.comp.
struct BatchNormPush {
  std::uint32_t n;      // m * c
  std::uint32_t c;
  std::uint32_t chunk;  // reduce: rows per partial sum; apply: rows between an invocation's rows
  float eps;
};
static_assert(sizeof(BatchNormPush) == 16);

// Values are batch_norm.comp's kMode.
enum class BatchNormMode : std::uint32_t { forward, grad_batch_statistics, grad_fixed_statistics };

// A ReLU after the batch norm, fused: the forward writes max(0, y); the gradients take
// dy as 0 where xhat * gamma + beta <= 0, recomputed from x as the forward computed it.
struct BatchNormRelu {
  BufferSlice gamma, beta;
};

// Scratch bytes of the two-pass reductions.
std::size_t batch_norm_workspace_bytes(std::uint64_t m, std::uint64_t c);

// stats [2, c] = (mean, biased variance) of every channel.
void batch_norm_stats(Recording& recording, std::uint64_t m, std::uint32_t c, const BufferSlice& x,
                      const BufferSlice& stats, const BufferSlice& workspace);
// sums [2, c] = (sum dy, sum dy * xhat) of every channel (dy masked by `relu` if given).
void batch_norm_grad_sums(Recording& recording, std::uint64_t m, std::uint32_t c, float eps, const BufferSlice& x,
                          const BufferSlice& stats, const BufferSlice& dy, const BufferSlice& sums,
                          const BufferSlice& workspace, const std::optional<BatchNormRelu>& relu = std::nullopt);
// out = the mode's elementwise formula (shaders/batch_norm.comp); `relu`: a fused ReLU
// (BatchNormRelu; beta is then read in every mode). Operands a mode does not read may be
// any slice.
void batch_norm_apply(Recording& recording, BatchNormMode mode, std::uint64_t m, std::uint32_t c, float eps,
                      const BufferSlice& x, const BufferSlice& stats, const BufferSlice& gamma,
                      const BufferSlice& beta, const BufferSlice& dy, const BufferSlice& sums, const BufferSlice& out,
                      bool relu = false);

}  // namespace vkp::vk
