#include "engine/graph/ops/internal/op_util.h"

#include <algorithm>

#include "engine/graph/ops.h"

namespace vkp::graph::detail {

void require_f32(const TensorType& t, const char* what) {
  if (t.dtype != DType::f32) fail(std::string(what) + " must be f32, got " + to_string(t));
}

int normalize_axis(int axis, int rank) {
  const int a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) fail("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  return a;
}

std::vector<std::int64_t> reshape_target(const std::vector<std::int64_t>& dims, const char* op) {
  std::vector<std::int64_t> out = dims;
  int unknown = 0;
  for (std::int64_t& d : out)
    if (d < 0) d = -1, ++unknown;
  if (unknown > 1) fail(std::string(op) + ": more than one unknown extent");
  return out;
}

bool compatible(std::int64_t a, std::int64_t b) { return a < 0 || b < 0 || a == b; }

Tensor sum_to(Tensor dy, Tensor like) {
  const std::vector<std::int64_t>& from = dy.dims();
  const std::vector<std::int64_t>& dims = like.dims();
  if (from == dims) return dy;
  const int lead = dy.rank() - static_cast<int>(dims.size());
  std::vector<int> axes;
  for (int i = 0; i < dy.rank(); ++i) {
    const bool broadcast = i < lead || (dims[static_cast<std::size_t>(i - lead)] == 1 && from[static_cast<std::size_t>(i)] != 1);
    if (broadcast) axes.push_back(i);
  }
  Tensor summed = axes.empty() ? dy : reduce_sum(dy, axes, /*keep_dims=*/true);
  return dy.graph().add(OpKind::reshape, {summed, like}, DimsAttrs{});
}

std::vector<Tensor> no_gradients(std::size_t count) { return std::vector<Tensor>(count); }

std::vector<Tensor> no_gradient(const Node&, std::span<const Tensor> inputs, Tensor, Tensor) {
  return no_gradients(inputs.size());
}

std::vector<std::int64_t> strides_of(const std::vector<std::int64_t>& dims) {
  std::vector<std::int64_t> s(dims.size());
  std::int64_t step = 1;
  for (std::size_t i = dims.size(); i-- > 0;) {
    s[i] = step;
    step *= dims[i];
  }
  return s;
}

std::vector<std::int64_t> broadcast_strides(const std::vector<std::int64_t>& dims, const std::vector<std::int64_t>& out) {
  std::vector<std::int64_t> s(out.size(), 0);
  const std::vector<std::int64_t> own = strides_of(dims);
  const std::size_t lead = out.size() - dims.size();
  for (std::size_t i = 0; i < dims.size(); ++i) s[lead + i] = dims[i] == 1 ? 0 : own[i];
  return s;
}

std::uint32_t u32(std::int64_t value, const LowerContext& ctx) {
  if (value < 0 || value > UINT32_MAX)
    throw Error(ErrorCode::unsupported, ctx.node.name + ": extent " + std::to_string(value) + " exceeds 32-bit indexing");
  return static_cast<std::uint32_t>(value);
}

}  // namespace vkp::graph::detail
