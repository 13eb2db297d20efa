// Batch normalization over x viewed as [m, c] (channels last): per-channel statistics,
// the normalization, and its gradient, each a pass or two over x. Kernels:
// batch_norm_reduce (statistics, gradient sums; deterministic two-pass reductions),
// batch_norm (the elementwise passes).
#pragma once

#include <cstddef>
#include <cstdint>

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

// How the reductions' second pass merges a channel's partial sums (both in a fixed order,
// so results repeat run to run): `tree`, a workgroup a channel over many short chunks,
// for GPUs; `serial`, an invocation a channel over fewer long ones, for CPU devices;
// `automatic` picks by the device's kind. Results differ between the two in the last bits.
enum class BatchNormMerge { automatic, serial, tree };

// One batch norm over x viewed as [m, c] (channels last): its extents, epsilon and
// operands. Each function below says which operands it reads and which one it writes;
// the others may stay empty.
struct BatchNormArgs {
  std::uint64_t m = 0;
  std::uint32_t c = 0;
  float eps = 0;
  BufferSlice x;
  BufferSlice stats;        // [2, c]: mean, biased variance
  BufferSlice gamma, beta;  // [c] each
  BufferSlice dy;           // like x
  BufferSlice sums;         // [2, c]: sum dy, sum dy * xhat
  // A ReLU after the batch norm, fused: the forward writes max(0, y); the gradients take
  // dy as 0 where xhat * gamma + beta <= 0, recomputed from x as the forward computed it
  // (gamma and beta are then read in every mode).
  bool relu = false;
  BatchNormMerge merge = BatchNormMerge::automatic;  // the reductions' (stats, grad sums)
};

// Scratch bytes of the two-pass reductions.
std::size_t batch_norm_workspace_bytes(std::uint64_t m, std::uint64_t c);

// Writes args.stats, each channel's (mean, biased variance) of args.x.
void batch_norm_stats(Recording& recording, const BatchNormArgs& args, const BufferSlice& workspace);
// Writes args.sums, each channel's (sum dy, sum dy * xhat) from x, stats and dy (and with
// args.relu, gamma and beta).
void batch_norm_grad_sums(Recording& recording, const BatchNormArgs& args, const BufferSlice& workspace);
// out = the mode's elementwise formula (shaders/batch_norm.comp): forward reads x, stats,
// gamma and beta; the gradients x, stats, gamma, dy, and with batch statistics the sums.
void batch_norm_apply(Recording& recording, BatchNormMode mode, const BatchNormArgs& args, const BufferSlice& out);

}  // namespace vkp::vk
