// Ops on indices: gather (embedding lookup) and its gradient gather_grad (a
// deterministic segment sum), and those built from other ops: one_hot, band_part and
// the causal mask. Kernel: vk::gather.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/gather.h"

namespace vkp::graph {
namespace {

// params [A.., V, B..] viewed as [outer, rows, inner]; `count` indices.
struct Geometry {
  std::int64_t outer = 1, rows = 0, inner = 1, count = 1;
};

Geometry geometry(int axis, const TensorType& params, const TensorType& indices) {
  Geometry g;
  for (int d = 0; d < params.rank(); ++d) {
    const std::int64_t e = params.dim(d);
    if (d < axis) g.outer *= e;
    if (d == axis) g.rows = e;
    if (d > axis) g.inner *= e;
  }
  for (std::int64_t e : indices.dims) g.count *= e;
  return g;
}

vk::GatherPush push(const Geometry& g, const LowerContext& ctx) {
  return {detail::u32(g.outer, ctx), detail::u32(g.rows, ctx), detail::u32(g.inner, ctx), detail::u32(g.count, ctx)};
}

int gather_axis(const Node& node, const TensorType& params) {
  return detail::normalize_axis(std::get<AxisAttrs>(node.attrs).axis, params.rank());
}

TensorType infer_gather(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "params");
  if (in[0].rank() < 1) detail::fail("params must have rank >= 1, got " + to_string(in[0]));
  if (in[1].dtype != DType::i32) detail::fail("indices must be i32, got " + to_string(in[1]));
  const int axis = gather_axis(node, in[0]);
  if (in[0].dims[static_cast<std::size_t>(axis)] < 0)
    detail::fail("the gathered axis of params " + to_string(in[0]) + " must have a known extent");
  std::vector<std::int64_t> dims(in[0].dims.begin(), in[0].dims.begin() + axis);
  dims.insert(dims.end(), in[1].dims.begin(), in[1].dims.end());
  dims.insert(dims.end(), in[0].dims.begin() + axis + 1, in[0].dims.end());
  return f32(dims);
}

std::vector<Tensor> grad_gather(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  return {in[0].graph().add(OpKind::gather_grad, {in[0], in[1], dy}, node.attrs), Tensor()};
}

void lower_gather(LowerContext& ctx) {
  const Geometry g = geometry(gather_axis(ctx.node, ctx.in_types[0]), ctx.in_types[0], ctx.in_types[1]);
  vk::gather(ctx.recording, push(g, ctx), ctx.in[0], ctx.in[1], ctx.out);
}

// The index at position k, checked: the reference holds the device to in-range indices
// (out-of-range ones are the host check's business, program.h).
std::int64_t index_at(const Node& node, const RefTensor& indices, std::int64_t k, std::int64_t rows) {
  const double v = indices.values[static_cast<std::size_t>(k)];
  if (v < 0 || v >= static_cast<double>(rows))
    detail::fail(node.name + ": index " + std::to_string(static_cast<std::int64_t>(v)) + " at position " +
                 std::to_string(k) + " is outside [0, " + std::to_string(rows) + ")");
  return static_cast<std::int64_t>(v);
}

RefTensor reference_gather(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const Geometry g = geometry(gather_axis(node, in[0]->type), in[0]->type, in[1]->type);
  const TensorType types[] = {in[0]->type, in[1]->type};
  RefTensor out = RefTensor::zeros(infer_gather(node, types));
  for (std::int64_t o = 0; o < g.outer; ++o)
    for (std::int64_t k = 0; k < g.count; ++k) {
      const std::int64_t r = index_at(node, *in[1], k, g.rows);
      for (std::int64_t i = 0; i < g.inner; ++i)
        out.values[static_cast<std::size_t>((o * g.count + k) * g.inner + i)] =
            in[0]->values[static_cast<std::size_t>((o * g.rows + r) * g.inner + i)];
    }
  return out;
}

// Inputs: params (for its type), indices, dy.
TensorType infer_gather_grad(const Node& node, std::span<const TensorType> in) {
  const TensorType y = infer_gather(node, in.subspan(0, 2));
  detail::require_f32(in[2], "dy");
  bool fits = in[2].rank() == y.rank();
  for (int d = 0; fits && d < y.rank(); ++d) fits = detail::compatible(in[2].dim(d), y.dim(d));
  if (!fits) detail::fail("dy " + to_string(in[2]) + " does not match the gathered " + to_string(y));
  return in[0];
}

void lower_gather_grad(LowerContext& ctx) {
  const Geometry g = geometry(gather_axis(ctx.node, ctx.in_types[0]), ctx.in_types[0], ctx.in_types[1]);
  vk::gather_grad(ctx.recording, push(g, ctx), ctx.in[2], ctx.in[1], ctx.out);
}

RefTensor reference_gather_grad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const Geometry g = geometry(gather_axis(node, in[0]->type), in[0]->type, in[1]->type);
  RefTensor out = RefTensor::zeros(in[0]->type);
  for (std::int64_t o = 0; o < g.outer; ++o)
    for (std::int64_t k = 0; k < g.count; ++k) {
      const std::int64_t r = index_at(node, *in[1], k, g.rows);
      for (std::int64_t i = 0; i < g.inner; ++i)
        out.values[static_cast<std::size_t>((o * g.rows + r) * g.inner + i)] +=
            in[2]->values[static_cast<std::size_t>((o * g.count + k) * g.inner + i)];
    }
  return out;
}

Tensor range_constant(Graph& graph, std::int64_t n, const std::string& name) {
  Array values(DType::f32, Shape{n});
  for (std::int64_t i = 0; i < n; ++i) values.data<float>()[static_cast<std::size_t>(i)] = static_cast<float>(i);
  return constant(graph, std::move(values), name);
}

}  // namespace

extern const OpDef gather_op{OpKind::gather, "gather", infer_gather,    grad_gather,
                             lower_gather,   nullptr,  reference_gather};
// Second derivatives through gathering are not implemented (grad nullptr).
extern const OpDef gather_grad_op{OpKind::gather_grad, "gather_grad", infer_gather_grad,    nullptr,
                                  lower_gather_grad,   nullptr,       reference_gather_grad};

Tensor gather(Tensor params, Tensor indices, int axis) {
  return params.graph().add(OpKind::gather, {params, indices}, AxisAttrs{axis}, "gather");
}

Tensor one_hot(Tensor indices, std::int64_t depth, float on_value, float off_value) {
  if (indices.dtype() != DType::i32)
    throw Error(ErrorCode::invalid_argument, "one_hot: indices must be i32, got " + to_string(indices.type()));
  if (depth < 1 || depth > (std::int64_t{1} << 24))
    throw Error(ErrorCode::invalid_argument, "one_hot: depth must be in [1, 2^24], got " + std::to_string(depth));
  Graph& g = indices.graph();
  std::vector<std::int64_t> dims = detail::reshape_target(indices.dims(), "one_hot");
  dims.push_back(1);
  // Indices below 2^24 are exact in float32, so equality picks exactly the index's column.
  const Tensor column = reshape(cast(indices, DType::f32), dims);
  const Tensor distance = column - range_constant(g, depth, "one_hot/range");  // 0 exactly at the index
  const Tensor is_index = graph::where(distance, scalar(g, 0.0f), scalar(g, 1.0f));
  if (on_value == 1.0f && off_value == 0.0f) return is_index;
  return add(mul(is_index, scalar(g, on_value - off_value)), scalar(g, off_value));
}

Tensor band_part(Tensor x, std::int64_t num_lower, std::int64_t num_upper) {
  if (x.rank() < 2 || x.dims()[x.dims().size() - 2] < 0 || x.dims().back() < 0)
    throw Error(ErrorCode::invalid_argument,
                "band_part: x must be [.., M, N] with known M and N, got " + to_string(x.type()));
  const std::int64_t m = x.dims()[x.dims().size() - 2], n = x.dims().back();
  Array mask(DType::f32, Shape{m, n});
  for (std::int64_t i = 0; i < m; ++i)
    for (std::int64_t j = 0; j < n; ++j)
      mask.data<float>()[static_cast<std::size_t>(i * n + j)] =
          (num_lower < 0 || i - j <= num_lower) && (num_upper < 0 || j - i <= num_upper) ? 1.0f : 0.0f;
  return graph::where(constant(x.graph(), std::move(mask), "band_part/mask"), x, scalar(x.graph(), 0.0f));
}

Tensor causal_mask(Graph& graph, std::int64_t steps) {
  if (steps < 1) throw Error(ErrorCode::invalid_argument, "causal_mask: steps must be >= 1");
  Array mask(DType::f32, Shape{steps, steps});
  for (std::int64_t i = 0; i < steps; ++i)
    for (std::int64_t j = 0; j < steps; ++j) mask.data<float>()[static_cast<std::size_t>(i * steps + j)] = j <= i;
  return constant(graph, std::move(mask), "causal_mask");
}

}  // namespace vkp::graph
