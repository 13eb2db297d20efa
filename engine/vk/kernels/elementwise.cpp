#include "engine/vk/kernels/elementwise.h"

#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>
#include <vector>

#include "core/error.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

// Invocations per workgroup and elements per invocation of unary and binary.
constexpr std::uint32_t kWorkgroup = 64, kPerInvocation = 4;

std::uint64_t workgroups_for(std::uint64_t n) {
  const std::uint64_t per_group = std::uint64_t{kWorkgroup} * kPerInvocation;
  return (n + per_group - 1) / per_group;
}

// The vec4 path of the shaders needs every operand 16-byte aligned.
bool aligned16(std::initializer_list<BufferSlice> slices) {
  for (const BufferSlice& s : slices)
    if (s.offset % 16 != 0) return false;
  return true;
}

void require_u32(std::uint64_t n, std::string_view kernel) {
  if (n > UINT32_MAX)
    throw Error(ErrorCode::unsupported, fmt::format("{}: {} elements exceed the 2^32 a kernel indexes", kernel, n));
}

}  // namespace

BinaryPush binary_push(const Shape& a, const Shape& b) {
  const Shape out = broadcast_shapes(a, b);
  const int rank = out.rank();
  // Per output axis (outermost first): extent and each operand's element stride.
  struct Axis {
    std::int64_t extent, sa, sb;
  };
  std::vector<Axis> axes;
  std::int64_t step_a = 1, step_b = 1;
  for (int i = rank - 1; i >= 0; --i) {
    const std::int64_t da = i < rank - a.rank() ? 1 : a[i - (rank - a.rank())];
    const std::int64_t db = i < rank - b.rank() ? 1 : b[i - (rank - b.rank())];
    if (out[i] != 1) axes.push_back({out[i], da == 1 ? 0 : step_a, db == 1 ? 0 : step_b});
    step_a *= da;
    step_b *= db;
  }
  std::reverse(axes.begin(), axes.end());
  // Merge an axis into its outer neighbour when both operands step through them as one.
  std::vector<Axis> merged;
  for (const Axis& axis : axes) {
    if (!merged.empty()) {
      Axis& outer = merged.back();
      if (outer.sa == axis.sa * axis.extent && outer.sb == axis.sb * axis.extent) {
        outer = {outer.extent * axis.extent, axis.sa, axis.sb};
        continue;
      }
    }
    merged.push_back(axis);
  }
  if (merged.empty()) merged.push_back({1, 1, 1});  // every extent is 1
  if (merged.size() > BinaryPush::kMaxRank)
    throw Error(ErrorCode::unsupported,
                fmt::format("broadcasting {} with {} needs {} separate axes; the binary kernel handles {}",
                            to_string(a), to_string(b), merged.size(), BinaryPush::kMaxRank));
  require_u32(static_cast<std::uint64_t>(out.numel()), "binary");
  BinaryPush push{};
  push.n = static_cast<std::uint32_t>(out.numel());
  push.rank = static_cast<std::uint32_t>(merged.size());
  for (std::size_t d = 0; d < merged.size(); ++d) {
    push.dims[d] = static_cast<std::uint32_t>(merged[d].extent);
    push.stride_a[d] = static_cast<std::uint32_t>(merged[d].sa);
    push.stride_b[d] = static_cast<std::uint32_t>(merged[d].sb);
  }
  return push;
}

void unary(Recording& recording, UnaryOp op, std::uint64_t n, const BufferSlice& x, const BufferSlice& y, float alpha) {
  require_u32(n, "unary");
  require_elements(x, n, "unary", "x");
  require_elements(y, n, "unary", "y");
  Device& device = recording.device();
  const bool vec4 = aligned16({x, y});
  const BufferSlice bindings[] = {x, y};
  const Kernel& kernel =
      storage_kernel(device, {shaders::unary, shaders::unary_texel, shaders::unary_f16, shaders::unary_texel_f16}, 0b01,
                     bindings, {{0, kWorkgroup}, {1, kPerInvocation}, {2, static_cast<std::uint32_t>(op)}, {3, vec4}});
  recording.dispatch(kernel, bindings, UnaryPush{static_cast<std::uint32_t>(n), alpha},
                     grid_1d(workgroups_for(vec4 ? n / 4 + 1 : n), device), to_string(op));
}

void binary(Recording& recording, BinaryOp op, const ShapedSlice& a_in, const ShapedSlice& b_in, const BufferSlice& c,
            float alpha) {
  const Shape &a_shape = a_in.shape, &b_shape = b_in.shape;
  const BufferSlice &a = a_in.slice, &b = b_in.slice;
  BinaryPush push = binary_push(a_shape, b_shape);
  push.scalar = alpha;
  require_elements(a, static_cast<std::uint64_t>(a_shape.numel()), "binary", "a");
  require_elements(b, static_cast<std::uint64_t>(b_shape.numel()), "binary", "b");
  require_elements(c, push.n, "binary", "c");
  Device& device = recording.device();
  const bool vec4 = push.rank == 1 && push.stride_a[0] == 1 && push.stride_b[0] == 1 && aligned16({a, b, c});
  const BufferSlice bindings[] = {a, b, c};
  const Kernel& kernel = storage_kernel(
      device, {shaders::binary, shaders::binary_texel, shaders::binary_f16, shaders::binary_texel_f16}, 0b011, bindings,
      {{0, kWorkgroup}, {1, kPerInvocation}, {2, static_cast<std::uint32_t>(op)}, {3, 0}, {4, vec4}});
  recording.dispatch(kernel, bindings, push, grid_1d(workgroups_for(vec4 ? push.n / 4 + 1 : push.n), device),
                     to_string(op));
}

void binary_scalar(Recording& recording, BinaryOp op, std::uint64_t n, const BufferSlice& a, ScalarOperand scalar,
                   const BufferSlice& c) {
  require_u32(n, "binary");
  require_elements(a, n, "binary", "a");
  require_elements(c, n, "binary", "c");
  BinaryPush push{};
  push.n = static_cast<std::uint32_t>(n);
  push.rank = 1;
  push.dims[0] = push.n;
  push.stride_a[0] = push.stride_b[0] = 1;
  push.scalar = scalar.value;
  Device& device = recording.device();
  const std::uint32_t mode = scalar.first ? 2 : 1;
  const bool vec4 = aligned16({a, c});
  // The scalar side's binding is not read; bind the tensor operand there too.
  const BufferSlice bindings[] = {a, a, c};
  const Kernel& kernel = storage_kernel(
      device, {shaders::binary, shaders::binary_texel, shaders::binary_f16, shaders::binary_texel_f16}, 0b011, bindings,
      {{0, kWorkgroup}, {1, kPerInvocation}, {2, static_cast<std::uint32_t>(op)}, {3, mode}, {4, vec4}});
  recording.dispatch(kernel, bindings, push, grid_1d(workgroups_for(vec4 ? n / 4 + 1 : n), device), to_string(op));
}

}  // namespace vkp::vk
