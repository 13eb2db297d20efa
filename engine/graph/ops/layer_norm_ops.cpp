// layer_norm: x normalized over its last axis (no scale or shift: LayerNorm's gamma and
// beta are elementwise ops after it), and its input gradient layer_norm_grad. The
// reference computes both in double from the same two-pass formulas. Kernel:
// vk::layer_norm.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/layer_norm.h"

namespace vkp::graph {
namespace {

struct Rows {
  std::int64_t rows = 1, cols = 1;
};

Rows rows_of(const TensorType& t) {
  Rows r;
  for (int d = 0; d + 1 < t.rank(); ++d) r.rows *= t.dim(d);
  r.cols = t.dim(-1);
  return r;
}

float epsilon_of(const Node& node) { return std::get<BatchNormAttrs>(node.attrs).epsilon; }

vk::LayerNormPush push(const LowerContext& ctx) {
  const Rows r = rows_of(ctx.in_types[0]);
  return {detail::u32(r.rows, ctx), detail::u32(r.cols, ctx), epsilon_of(ctx.node)};
}

TensorType infer_layer_norm(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  if (in[0].rank() < 1 || in[0].dims.back() < 1)
    detail::fail("the input needs a last axis of known extent, got " + to_string(in[0]));
  return in[0];
}

std::vector<Tensor> grad_layer_norm(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  return {in[0].graph().add(OpKind::layer_norm_grad, {in[0], dy}, node.attrs)};
}

void lower_layer_norm(LowerContext& ctx) { vk::layer_norm(ctx.recording, push(ctx), ctx.in[0], ctx.out); }

// Calls fn(row offset, mean, 1 / sqrt(var + epsilon)) for each row of x.
template <class Fn>
void for_each_row(const RefTensor& x, double epsilon, Fn fn) {
  const Rows r = rows_of(x.type);
  for (std::int64_t row = 0; row < r.rows; ++row) {
    const double* v = x.values.data() + row * r.cols;
    double sum = 0;
    for (std::int64_t c = 0; c < r.cols; ++c) sum += v[c];
    const double mean = sum / static_cast<double>(r.cols);
    double squares = 0;
    for (std::int64_t c = 0; c < r.cols; ++c) squares += (v[c] - mean) * (v[c] - mean);
    fn(row * r.cols, mean, 1.0 / std::sqrt(squares / static_cast<double>(r.cols) + epsilon));
  }
}

RefTensor reference_layer_norm(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = *in[0];
  const std::int64_t cols = rows_of(out.type).cols;
  for_each_row(*in[0], epsilon_of(node), [&](std::int64_t at, double mean, double rstd) {
    for (std::int64_t c = 0; c < cols; ++c)
      out.values[static_cast<std::size_t>(at + c)] = (in[0]->values[static_cast<std::size_t>(at + c)] - mean) * rstd;
  });
  return out;
}

// Inputs: x, dxhat.
TensorType infer_layer_norm_grad(const Node& node, std::span<const TensorType> in) {
  const TensorType x = infer_layer_norm(node, in);
  detail::require_f32(in[1], "dy");
  bool fits = in[1].rank() == x.rank();
  for (int d = 0; fits && d < x.rank(); ++d) fits = detail::compatible(in[1].dim(d), x.dim(d));
  if (!fits) detail::fail("dy " + to_string(in[1]) + " does not match x " + to_string(x));
  return x;
}

void lower_layer_norm_grad(LowerContext& ctx) {
  vk::layer_norm_grad(ctx.recording, push(ctx), ctx.in[0], ctx.in[1], ctx.out);
}

RefTensor reference_layer_norm_grad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = *in[0];
  const std::int64_t cols = rows_of(out.type).cols;
  const double n = static_cast<double>(cols);
  for_each_row(*in[0], epsilon_of(node), [&](std::int64_t at, double mean, double rstd) {
    const auto i = [&](std::int64_t c) { return static_cast<std::size_t>(at + c); };
    double g_sum = 0, gx_sum = 0;
    for (std::int64_t c = 0; c < cols; ++c) {
      g_sum += in[1]->values[i(c)];
      gx_sum += in[1]->values[i(c)] * (in[0]->values[i(c)] - mean) * rstd;
    }
    for (std::int64_t c = 0; c < cols; ++c)
      out.values[i(c)] = (in[1]->values[i(c)] - g_sum / n - (in[0]->values[i(c)] - mean) * rstd * gx_sum / n) * rstd;
  });
  return out;
}

}  // namespace

extern const OpDef layer_norm_op{OpKind::layer_norm, "layer_norm", infer_layer_norm,    grad_layer_norm,
                                 lower_layer_norm,   nullptr,      reference_layer_norm};
// Second derivatives through layer normalization are not implemented (grad nullptr).
extern const OpDef layer_norm_grad_op{OpKind::layer_norm_grad, "layer_norm_grad", infer_layer_norm_grad,    nullptr,
                                      lower_layer_norm_grad,   nullptr,           reference_layer_norm_grad};

Tensor layer_norm(Tensor x, float epsilon) {
  if (!(epsilon >= 0.0f))
    throw Error(ErrorCode::invalid_argument, "layer_norm: epsilon must be >= 0, got " + std::to_string(epsilon));
  BatchNormAttrs a;
  a.epsilon = epsilon;
  return x.graph().add(OpKind::layer_norm, {x}, a, "layer_norm");
}

}  // namespace vkp::graph
