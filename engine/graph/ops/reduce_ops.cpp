// Reductions over a run of adjacent axes (sum, mean, max), and argmax along one axis.
// Kernel: vk::reduce on the [outer, axis, inner] view.
#include <algorithm>
#include <cmath>
#include <limits>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/reduce.h"

namespace vkp::graph {
namespace {

// [first, last) of the reduced axes of a rank-`rank` input.
std::pair<int, int> reduced_range(const ReduceAttrs& a, int rank) {
  if (a.axis_count == 0) return {0, rank};
  return {a.first_axis, a.first_axis + a.axis_count};
}

std::vector<std::int64_t> reduced_dims(const ReduceAttrs& a, const std::vector<std::int64_t>& dims) {
  const auto [first, last] = reduced_range(a, static_cast<int>(dims.size()));
  std::vector<std::int64_t> out;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    const bool reduced = i >= first && i < last;
    if (!reduced)
      out.push_back(dims[static_cast<std::size_t>(i)]);
    else if (a.keep_dims)
      out.push_back(1);
  }
  return out;
}

TensorType infer_reduce(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const ReduceAttrs& a = std::get<ReduceAttrs>(node.attrs);
  const auto [first, last] = reduced_range(a, in[0].rank());
  if (first < 0 || last > in[0].rank() || first > last)
    detail::fail("axes [" + std::to_string(first) + ", " + std::to_string(last) + ") are out of range for " +
                 to_string(in[0]));
  return f32(reduced_dims(a, in[0].dims));
}

// x's dims with the reduced axes set to 1: where keep_dims puts the result.
std::vector<std::int64_t> kept_dims(const ReduceAttrs& a, const std::vector<std::int64_t>& dims) {
  ReduceAttrs keep = a;
  keep.keep_dims = true;
  return reduced_dims(keep, dims);
}

Tensor broadcast_like(Tensor t, Tensor like) { return t.graph().add(OpKind::broadcast_to, {t, like}, DimsAttrs{}); }
Tensor reshape_like(Tensor t, Tensor like) { return t.graph().add(OpKind::reshape, {t, like}, DimsAttrs{}); }

std::vector<Tensor> grad_reduce(const Node& node, std::span<const Tensor> in, Tensor y, Tensor dy) {
  const ReduceAttrs& a = std::get<ReduceAttrs>(node.attrs);
  const Tensor x = in[0];
  Graph& g = x.graph();
  // dy and y reshaped to keep_dims form, then broadcast back over the reduced axes.
  ReduceAttrs keep = a;
  keep.keep_dims = true;
  const Tensor dy_kept = a.keep_dims ? dy : g.add(OpKind::reshape, {dy}, DimsAttrs{kept_dims(a, x.dims())});
  const Tensor spread = broadcast_like(dy_kept, x);
  switch (a.fn) {
    case ReduceFn::sum: return {spread};
    case ReduceFn::mean: {
      // 1 / (number of reduced elements): a constant when those extents are known,
      // else counted from the shapes at run time.
      const auto [first, last] = reduced_range(a, x.rank());
      std::int64_t count = 1;
      for (int i = first; i < last && count > 0; ++i)
        count = x.dims()[static_cast<std::size_t>(i)] < 0 ? -1 : count * x.dims()[static_cast<std::size_t>(i)];
      if (count > 0) return {spread * (1.0f / static_cast<float>(count))};
      const Tensor all = reduce_sum(broadcast_like(scalar(g, 1.0f), x), {}, false);
      const Tensor kept = reduce_sum(broadcast_like(scalar(g, 1.0f), dy_kept), {}, false);
      return {mul(spread, div(kept, all))};
    }
    case ReduceFn::count_nonfinite: return {Tensor()};  // a count: no gradient
    case ReduceFn::max: {
      const Tensor y_kept = a.keep_dims ? y : reshape_like(y, dy_kept);
      const Tensor mask = g.add(OpKind::binary, {x, broadcast_like(y_kept, x)}, BinaryAttrs{shaders::BinaryOp::equal});
      const Tensor ties = g.add(OpKind::reduce, {mask}, keep);
      return {div(mul(mask, spread), broadcast_like(ties, x))};
    }
  }
  return {Tensor()};
}

vk::ReduceArgs reduce_args(const ReduceAttrs& a, const TensorType& x) {
  const auto [first, last] = reduced_range(a, x.rank());
  std::int64_t outer = 1, axis = 1, inner = 1;
  for (int i = 0; i < x.rank(); ++i) (i < first ? outer : i < last ? axis : inner) *= x.dim(i);
  vk::ReduceArgs args;
  switch (a.fn) {
    case ReduceFn::sum: args.op = vk::ReduceOp::sum; break;
    case ReduceFn::mean: args.op = vk::ReduceOp::mean; break;
    case ReduceFn::max: args.op = vk::ReduceOp::max; break;
    case ReduceFn::count_nonfinite: args.op = vk::ReduceOp::count_nonfinite; break;
  }
  args.outer = static_cast<std::uint32_t>(outer);
  args.axis = static_cast<std::uint32_t>(axis);
  args.inner = static_cast<std::uint32_t>(inner);
  return args;
}

std::size_t workspace_reduce(const Node& node, std::span<const TensorType> in, const TensorType&,
                             const vk::Device& device) {
  return vk::reduce_workspace_bytes(reduce_args(std::get<ReduceAttrs>(node.attrs), in[0]), device);
}

void lower_reduce(LowerContext& ctx) {
  const vk::ReduceArgs args = reduce_args(ctx.attrs<ReduceAttrs>(), ctx.in_types[0]);
  if ((args.op == vk::ReduceOp::mean || args.op == vk::ReduceOp::max) && args.axis == 0)
    throw Error(ErrorCode::invalid_argument, ctx.node.name + ": mean or max over zero elements");
  vk::reduce(ctx.recording, args, ctx.in[0], ctx.out, ctx.workspace);
}

RefTensor reference_reduce(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const ReduceAttrs& a = std::get<ReduceAttrs>(node.attrs);
  const RefTensor& x = *in[0];
  const vk::ReduceArgs r = reduce_args(a, x.type);
  RefTensor out = RefTensor::zeros(f32(reduced_dims(a, x.type.dims)));
  for (std::uint32_t o = 0; o < r.outer; ++o)
    for (std::uint32_t i = 0; i < r.inner; ++i) {
      double acc = a.fn == ReduceFn::max ? -std::numeric_limits<double>::infinity() : 0.0;
      for (std::uint32_t k = 0; k < r.axis; ++k) {
        const double v = x.values[(std::size_t{o} * r.axis + k) * r.inner + i];
        acc = a.fn == ReduceFn::max               ? std::max(acc, v)
              : a.fn == ReduceFn::count_nonfinite ? acc + (std::isfinite(v) ? 0.0 : 1.0)
                                                  : acc + v;
      }
      if (a.fn == ReduceFn::mean) acc /= r.axis;
      out.values[std::size_t{o} * r.inner + i] = acc;
    }
  return out;
}

TensorType infer_argmax(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const int axis = detail::normalize_axis(std::get<AxisAttrs>(node.attrs).axis, in[0].rank());
  std::vector<std::int64_t> dims = in[0].dims;
  dims.erase(dims.begin() + axis);
  return i32(dims);
}

vk::ReduceArgs argmax_args(int axis, const TensorType& x) {
  ReduceAttrs a;
  a.first_axis = detail::normalize_axis(axis, x.rank());
  a.axis_count = 1;
  vk::ReduceArgs args = reduce_args(a, x);
  args.op = vk::ReduceOp::argmax;
  return args;
}

void lower_argmax(LowerContext& ctx) {
  const vk::ReduceArgs args = argmax_args(ctx.attrs<AxisAttrs>().axis, ctx.in_types[0]);
  if (args.axis == 0) throw Error(ErrorCode::invalid_argument, ctx.node.name + ": argmax over an empty axis");
  vk::reduce(ctx.recording, args, ctx.in[0], ctx.out, ctx.workspace);
}

RefTensor reference_argmax(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const RefTensor& x = *in[0];
  const vk::ReduceArgs r = argmax_args(std::get<AxisAttrs>(node.attrs).axis, x.type);
  RefTensor out = RefTensor::zeros(infer_argmax(node, std::span<const TensorType>(&x.type, 1)));
  for (std::uint32_t o = 0; o < r.outer; ++o)
    for (std::uint32_t i = 0; i < r.inner; ++i) {
      std::uint32_t best = 0;
      for (std::uint32_t k = 1; k < r.axis; ++k)
        if (x.values[(std::size_t{o} * r.axis + k) * r.inner + i] >
            x.values[(std::size_t{o} * r.axis + best) * r.inner + i])
          best = k;
      out.values[std::size_t{o} * r.inner + i] = best;
    }
  return out;
}

// Reduces over sorted, unique `axes`, one run of adjacent axes at a time (last first,
// so that earlier axis numbers stay valid).
Tensor reduce_axes(ReduceFn fn, Tensor x, std::vector<int> axes, bool keep_dims) {
  ReduceAttrs a;
  a.fn = fn;
  a.keep_dims = keep_dims;
  if (axes.empty()) return x.graph().add(OpKind::reduce, {x}, a);
  for (int& axis : axes) axis = detail::normalize_axis(axis, x.rank());
  std::sort(axes.begin(), axes.end());
  axes.erase(std::unique(axes.begin(), axes.end()), axes.end());
  if (axes.size() == static_cast<std::size_t>(x.rank())) return x.graph().add(OpKind::reduce, {x}, a);
  Tensor out = x;
  for (std::size_t end = axes.size(); end > 0;) {
    std::size_t begin = end - 1;
    while (begin > 0 && axes[begin - 1] + 1 == axes[begin]) --begin;
    a.first_axis = axes[begin];
    a.axis_count = static_cast<int>(end - begin);
    out = x.graph().add(OpKind::reduce, {out}, a);
    end = begin;
  }
  return out;
}

}  // namespace

// Float16 (OpDef::f16): reductions read either width; their small results stay float32.
extern const OpDef reduce_op{.kind = OpKind::reduce,
                             .name = "reduce",
                             .infer = infer_reduce,
                             .grad = grad_reduce,
                             .lower = lower_reduce,
                             .workspace = workspace_reduce,
                             .reference = reference_reduce,
                             .f16 = {0b1, false}};
extern const OpDef argmax_op{.kind = OpKind::argmax,
                             .name = "argmax",
                             .infer = infer_argmax,
                             .grad = detail::no_gradient,
                             .lower = lower_argmax,
                             .workspace = nullptr,
                             .reference = reference_argmax,
                             .f16 = {0b1, false}};

Tensor reduce_sum(Tensor x, std::vector<int> axes, bool keep_dims) {
  return reduce_axes(ReduceFn::sum, x, std::move(axes), keep_dims);
}
Tensor reduce_mean(Tensor x, std::vector<int> axes, bool keep_dims) {
  return reduce_axes(ReduceFn::mean, x, std::move(axes), keep_dims);
}
Tensor reduce_max(Tensor x, std::vector<int> axes, bool keep_dims) {
  return reduce_axes(ReduceFn::max, x, std::move(axes), keep_dims);
}
Tensor reduce_min(Tensor x, std::vector<int> axes, bool keep_dims) {
  return neg(reduce_max(neg(x), std::move(axes), keep_dims));  // exact: negation only flips a sign bit
}
Tensor count_nonfinite(Tensor x) { return reduce_axes(ReduceFn::count_nonfinite, x, {}, false); }
Tensor argmax(Tensor x, int axis) { return x.graph().add(OpKind::argmax, {x}, AxisAttrs{axis}); }
Tensor l2_loss(Tensor x) { return reduce_sum(square(x)) * 0.5f; }

Tensor rms(Tensor x) { return sqrt(reduce_mean(square(x))); }

}  // namespace vkp::graph
