#include "engine/vk/kernels/copy.h"

#include <bit>

#include <fmt/format.h>

#include "core/error.h"
#include "core/half.h"
#include "shaders/embedded.h"

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
  if (dst.f16) {  // two float16 values a word (float16 slices hold whole words)
    const std::uint32_t h = to_half(value).bits;
    BufferSlice words = dst;
    words.f16 = false;
    fill_bits(recording, words, (n + 1) / 2, h | h << 16);
    return;
  }
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
  const bool dense = args.dst_strides.empty();
  if (args.src_strides.size() != rank || (!dense && args.dst_strides.size() != rank))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("copy: {} dims, {} source and {} destination strides; needs a stride per dim", rank,
                            args.src_strides.size(), args.dst_strides.size()));
  std::vector<std::uint64_t> dst_strides(rank);
  for (std::size_t d = rank, step = 1; d-- > 0; step *= args.dims[d])
    dst_strides[d] = dense ? step : args.dst_strides[d];
  // Drop extents of 1; merge a dim into the one outside it when both sides step through
  // the pair as one.
  struct Dim {
    std::uint64_t extent, src, dst;
  };
  std::vector<Dim> dims;
  std::uint64_t n = 1, src_last = args.src_offset, dst_last = args.dst_offset;
  for (std::size_t d = 0; d < rank; ++d) {
    n *= args.dims[d];
    if (args.dims[d] == 0) continue;
    src_last += std::uint64_t{args.dims[d] - 1} * args.src_strides[d];
    dst_last += std::uint64_t{args.dims[d] - 1} * dst_strides[d];
    if (args.dims[d] == 1) continue;
    const Dim dim{args.dims[d], args.src_strides[d], dst_strides[d]};
    if (!dims.empty() && dims.back().src == dim.src * dim.extent && dims.back().dst == dim.dst * dim.extent)
      dims.back() = {dims.back().extent * dim.extent, dim.src, dim.dst};
    else
      dims.push_back(dim);
  }
  if (n == 0) return;
  if (dims.empty()) dims.push_back({1, 1, 1});
  if (dims.size() > CopyPush::kMaxRank)
    throw Error(ErrorCode::unsupported,
                fmt::format("copy: the region needs {} separate dims; the kernel handles {}", dims.size(), CopyPush::kMaxRank));
  if (n > UINT32_MAX) throw Error(ErrorCode::unsupported, fmt::format("copy: {} elements exceed 2^32", n));
  require_elements(src, src_last + 1, "copy", "src");
  require_elements(dst, dst_last + 1, "copy", "dst");
  CopyPush push{};
  push.n = static_cast<std::uint32_t>(n);
  push.rank = static_cast<std::uint32_t>(dims.size());
  push.src_offset = args.src_offset;
  push.dst_offset = args.dst_offset;
  for (std::size_t d = 0; d < dims.size(); ++d) {
    push.dims[d] = static_cast<std::uint32_t>(dims[d].extent);
    push.src_strides[d] = static_cast<std::uint32_t>(dims[d].src);
    push.dst_strides[d] = static_cast<std::uint32_t>(dims[d].dst);
  }
  Device& device = recording.device();
  const BufferSlice bindings[] = {src, dst};
  // The source's loads differ across the lanes: a texel buffer where it can be one (not
  // for a float16 copy).
  const bool any_f16 = src.f16 || dst.f16;
  const Kernel& kernel = any_f16 ? storage_kernel(device, shaders::copy, shaders::copy_f16, bindings,
                                                  {{0, kWorkgroup}, {1, kPerInvocation}})
                                 : texel_kernel(device, shaders::copy, shaders::copy_texel, 0b01, bindings,
                                                {{0, kWorkgroup}, {1, kPerInvocation}});
  recording.dispatch(kernel, bindings, push, grid_1d(workgroups_for(n), device), "copy");
}

void transpose(Recording& recording, const MatrixBatch& of, const BufferSlice& src, const BufferSlice& dst,
               KernelChoice choice) {
  const auto [batch, rows, cols] = of;
  const std::uint64_t n = std::uint64_t{batch} * rows * cols;
  require_elements(src, n, "transpose", "src");
  require_elements(dst, n, "transpose", "dst");
  if (n == 0) return;
  Device& device = recording.device();
  if (resolve(choice, device) == DeviceKind::cpu) {
    // Read src along its columns: dst[b][c][r] = src[b*rows*cols + r*cols + c].
    copy(recording, {{batch, cols, rows}, {rows * cols, 1, cols}, 0, 0, {}}, src, dst);
    return;
  }
  const Kernel& kernel = device.kernel(shaders::transpose, {{0, kTile}});
  recording.dispatch(kernel, {src, dst}, TransposePush{rows, cols},
                     {(cols + kTile - 1) / kTile, (rows + kTile - 1) / kTile, batch}, "transpose");
}

}  // namespace vkp::vk
