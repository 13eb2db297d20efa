#include "engine/vk/kernels/batch_norm.h"

#include <algorithm>

#include <fmt/format.h>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

// Partial reductions worth running at once. A pass-0 invocation adds up a chunk of rows
// in a loop whose loads wait on memory, so a GPU needs tens of thousands of them (4096
// left an H100's batch-norm reductions of ResNet-20, 16 channels, on 16 workgroups of
// 512-row loops), its pass 1 merging a channel's chunks in a workgroup of 64 (the tree
// merge); a CPU device runs 4096 with one pass-1 invocation a channel (the serial
// merge): more partial sums and the tree's barriers cost it up to 2.6x (lavapipe).
constexpr std::uint64_t kTreeParallel = 65536, kSerialParallel = 4096;

std::uint64_t chunk_rows(std::uint64_t m, std::uint64_t c, std::uint64_t parallel) {
  const std::uint64_t chunks =
      std::clamp<std::uint64_t>(parallel / std::max<std::uint64_t>(c, 1), 1, std::max<std::uint64_t>(m, 1));
  return (m + chunks - 1) / chunks;
}

bool tree_merge(const BatchNormArgs& args, const Device& device) {
  return args.merge == BatchNormMerge::automatic ? device.kind() != DeviceKind::cpu
                                                 : args.merge == BatchNormMerge::tree;
}

constexpr std::uint64_t kGroup = 64;  // the shaders' local_size_x
// batch_norm_apply on a CPU device: rows per invocation, at most, and the fewest
// workgroups worth keeping every core busy.
constexpr std::uint64_t kCpuRows = 16, kCpuMinWorkgroups = 16;

// Rows between one invocation's rows of the apply pass (its p.chunk): m, one row each, on
// a GPU; on a CPU device up to kCpuRows rows each, fewer where that would leave fewer
// than kCpuMinWorkgroups workgroups.
std::uint64_t apply_row_stride(std::uint64_t m, std::uint64_t per_row, DeviceKind kind) {
  if (kind != DeviceKind::cpu) return m;
  std::uint64_t rows = kCpuRows;
  auto workgroups = [&] { return ((m + rows - 1) / rows * per_row + kGroup - 1) / kGroup; };
  while (rows > 1 && workgroups() < kCpuMinWorkgroups) rows /= 2;
  return (m + rows - 1) / rows;
}

std::uint32_t checked_n(std::uint64_t m, std::uint64_t c) {
  if (m * c > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("batch_norm: {} x {} elements exceed 2^32", m, c));
  return static_cast<std::uint32_t>(m * c);
}

// An operand a kernel does not read still takes a binding: `fallback` stands in for it.
BufferSlice or_else(const BufferSlice& slice, const BufferSlice& fallback) {
  return slice.buffer != VK_NULL_HANDLE ? slice : fallback;
}

// mode 0: out = stats of x; mode 1: out = gradient sums of dy (masked by the ReLU).
void reduce(Recording& recording, std::uint32_t mode, const BatchNormArgs& args, const BufferSlice& out,
            const BufferSlice& workspace) {
  const std::uint64_t m = args.m;
  const std::uint32_t c = args.c;
  const std::uint32_t n = checked_n(m, c);
  Device& device = recording.device();
  const bool tree = tree_merge(args, device);
  const std::uint64_t chunk = chunk_rows(m, c, tree ? kTreeParallel : kSerialParallel);
  const std::uint64_t chunks = (m + chunk - 1) / chunk;
  require_elements(args.x, n, "batch_norm", "x");
  require_elements(out, 2ull * c, "batch_norm", "output statistics");
  require_elements(workspace, chunks * c * 3, "batch_norm", "workspace");
  if (n == 0) return;
  const BatchNormPush push{n, c, static_cast<std::uint32_t>(chunk), args.eps};
  const BufferSlice partial = workspace.sub(0, chunks * c * 12);
  // Without a ReLU, gamma and beta are not read (nor dy and the statistics in mode 0):
  // the input and the output stand in for them.
  const BufferSlice x = args.x, dy = mode == 0 ? x : args.dy, stats = mode == 0 ? out : args.stats;
  const BufferSlice gamma = args.relu ? args.gamma : out, beta = args.relu ? args.beta : out;
  const std::uint32_t masked = args.relu ? 1 : 0;
  const std::uint32_t vec4 = c % 4 == 0 && x.offset % 16 == 0 && dy.offset % 16 == 0 ? 1 : 0;
  const std::uint64_t pass0 = chunks * (vec4 ? c / 4 : c);  // invocations
  // x and dy may be float16; the partial sums and the statistics are float32.
  const BufferSlice bindings[] = {x, dy, stats, partial, out, gamma, beta};
  constexpr std::uint32_t kF16 = 0b0000011;
  recording.dispatch(storage_kernel(device,
                                    {shaders::batch_norm_reduce, shaders::batch_norm_reduce_texel,
                                     shaders::batch_norm_reduce_f16, shaders::batch_norm_reduce_texel_f16},
                                    0b11, bindings, {{0, mode}, {1, 0}, {2, masked}, {3, vec4}, {4, tree}}, kF16),
                     bindings, push, grid_1d((pass0 + kGroup - 1) / kGroup, device), "batch_norm_reduce");
  recording.dispatch(storage_kernel(device, shaders::batch_norm_reduce, shaders::batch_norm_reduce_f16, bindings,
                                    {{0, mode}, {1, 1}, {2, masked}, {4, tree}}, kF16),
                     bindings, push, grid_1d(tree ? c : (c + kGroup - 1) / kGroup, device), "batch_norm_reduce");
}

}  // namespace

std::size_t batch_norm_workspace_bytes(std::uint64_t m, std::uint64_t c) {
  const std::uint64_t chunk = chunk_rows(m, c, kTreeParallel);  // the more chunks of the two
  return std::max<std::uint64_t>((m + chunk - 1) / chunk * c * 12, 16);
}

void batch_norm_stats(Recording& recording, const BatchNormArgs& args, const BufferSlice& workspace) {
  reduce(recording, 0, args, args.stats, workspace);
}

void batch_norm_grad_sums(Recording& recording, const BatchNormArgs& args, const BufferSlice& workspace) {
  require_elements(args.dy, args.m * args.c, "batch_norm", "dy");
  require_elements(args.stats, 2ull * args.c, "batch_norm", "statistics");
  if (args.relu) {
    require_elements(args.gamma, args.c, "batch_norm", "gamma");
    require_elements(args.beta, args.c, "batch_norm", "beta");
  }
  reduce(recording, 1, args, args.sums, workspace);
}

void batch_norm_apply(Recording& recording, BatchNormMode mode, const BatchNormArgs& args, const BufferSlice& out) {
  const std::uint64_t m = args.m;
  const std::uint32_t c = args.c;
  const std::uint32_t n = checked_n(m, c);
  require_elements(args.x, n, "batch_norm", "x");
  require_elements(args.stats, 2ull * c, "batch_norm", "statistics");
  require_elements(args.gamma, c, "batch_norm", "gamma");
  const bool forward = mode == BatchNormMode::forward;
  if (forward || args.relu) require_elements(args.beta, c, "batch_norm", "beta");
  if (!forward) require_elements(args.dy, n, "batch_norm", "dy");
  if (mode == BatchNormMode::grad_batch_statistics) require_elements(args.sums, 2ull * c, "batch_norm", "sums");
  require_elements(out, n, "batch_norm", "output");
  if (n == 0) return;
  // Operands the mode does not read: the forward's dy is x (so that both may be texel
  // buffers), beta and the sums are gamma and the statistics.
  const BufferSlice x = args.x, dy = forward ? x : args.dy;
  const BufferSlice beta = or_else(args.beta, args.gamma), sums = or_else(args.sums, args.stats);
  const bool vec4 = c % 4 == 0 && x.offset % 16 == 0 && out.offset % 16 == 0 && dy.offset % 16 == 0;
  Device& device = recording.device();
  // x, dy and out may be float16 (and the bindings they stand in for).
  const BufferSlice bindings[] = {x, args.stats, args.gamma, beta, dy, sums, out};
  const Kernel& kernel = storage_kernel(
      device, {shaders::batch_norm, shaders::batch_norm_texel, shaders::batch_norm_f16, shaders::batch_norm_texel_f16},
      0b0010001, bindings, {{0, static_cast<std::uint32_t>(mode)}, {1, vec4}, {2, args.relu}}, 0b1010001);
  const std::uint64_t per_row = vec4 ? c / 4 : c, stride = apply_row_stride(m, per_row, device.kind());
  recording.dispatch(kernel, bindings, BatchNormPush{n, c, static_cast<std::uint32_t>(stride), args.eps},
                     grid_1d((stride * per_row + kGroup - 1) / kGroup, device), "batch_norm");
}

}  // namespace vkp::vk
