#include "vkpack/engine/vk/kernels/copy.h"

#include <bit>

#include <fmt/format.h>

#include "vkpack/core/error.h"
#include "vkpack/shaders/embedded.h"

namespace vkp::vk {
namespace {

constexpr std::uint32_t kWorkgroup = 64, kPerInvocation = 4;
constexpr std::uint32_t kTile = 16;

std::uint64_t workgroups_for(std::uint64_t n) {
  const std::uint64_t per_group = std::uint64_t{kWorkgroup} * kPerInvocation;
  return (n + per_group - 1) / per_group;
}

}  // namespace

void fill(Recording& recording, const BufferSlice& dst, std::uint64_t n, float value) {
  fill_bits(recording, dst, n, std::bit_cast<std::uint32_t>(value));
}

void fill_bits(Recording& recording, const BufferSlice& dst, std::uint64_t n, std::uint32_t word) {
  if (n > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("fill: {} elements exceed 2^32", n));
  require_elements(dst, n, "fill", "dst");
  Device& device = recording.device();
  const bool vec4 = dst.offset % 16 == 0;
  const Kernel& kernel = device.kernel(shaders::fill, {{0, kWorkgroup}, {1, kPerInvocation}, {2, vec4}});
  recording.dispatch(kernel, {dst}, FillPush{static_cast<std::uint32_t>(n), word},
                     grid_1d(workgroups_for(vec4 ? n / 4 + 1 : n), device), "fill");
}

void copy(Recording& recording, const StridedCopy& args, const BufferSlice& src, const BufferSlice& dst) {
  const std::size_t rank = args.dims.size();
  if (rank == 0 || rank > CopyPush::kMaxRank || args.src_strides.size() != rank)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("copy: {} dims and {} strides; needs 1 to {} of each, as many strides as dims", rank,
                            args.src_strides.size(), CopyPush::kMaxRank));
  CopyPush push{};
  push.rank = static_cast<std::uint32_t>(rank);
  push.src_offset = args.src_offset;
  push.dst_offset = args.dst_offset;
  std::uint64_t n = 1, last = args.src_offset;
  for (std::size_t d = 0; d < rank; ++d) {
    push.dims[d] = args.dims[d];
    push.src_strides[d] = args.src_strides[d];
    n *= args.dims[d];
    if (args.dims[d] > 0) last += std::uint64_t{args.dims[d] - 1} * args.src_strides[d];
  }
  if (n == 0) return;
  if (n > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("copy: {} elements exceed 2^32", n));
  push.n = static_cast<std::uint32_t>(n);
  require_elements(src, last + 1, "copy", "src");
  require_elements(dst, args.dst_offset + n, "copy", "dst");
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::copy, {{0, kWorkgroup}, {1, kPerInvocation}});
  recording.dispatch(kernel, {src, dst}, push, grid_1d(workgroups_for(n), device), "copy");
}

void transpose(Recording& recording, std::uint32_t batch, std::uint32_t rows, std::uint32_t cols,
               const BufferSlice& src, const BufferSlice& dst, KernelChoice choice) {
  const std::uint64_t n = std::uint64_t{batch} * rows * cols;
  require_elements(src, n, "transpose", "src");
  require_elements(dst, n, "transpose", "dst");
  if (n == 0) return;
  Device& device = recording.device();
  if (resolve(choice, device) == DeviceKind::cpu) {
    // Read src along its columns: dst[b][c][r] = src[b*rows*cols + r*cols + c].
    copy(recording, {{batch, cols, rows}, {rows * cols, 1, cols}, 0, 0}, src, dst);
    return;
  }
  const Kernel& kernel = device.kernel(shaders::transpose, {{0, kTile}});
  recording.dispatch(kernel, {src, dst}, TransposePush{rows, cols},
                     {(cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile, batch}, "transpose");
}

}  // namespace vkp::vk
