// softmax and log_softmax over the last axis, the fused sparse softmax cross entropy
// and its gradient, in_top_k, and the composites built on them. Kernel: vk::row_op.
#include <cmath>
#include <limits>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/softmax.h"

namespace vkp::graph {
namespace {

// rows x cols of a tensor whose last axis is the class axis.
std::pair<std::int64_t, std::int64_t> rows_cols(const TensorType& t) {
  const std::int64_t cols = t.dim(-1);
  const std::int64_t n = t.numel();
  return {cols > 0 ? n / cols : 0, cols};
}

// --- softmax / log_softmax ---

TensorType infer_softmax(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  if (in[0].rank() < 1) detail::fail("softmax needs rank >= 1");
  return in[0];
}

std::vector<Tensor> grad_softmax(const Node& node, std::span<const Tensor>, Tensor y, Tensor dy) {
  if (std::get<SoftmaxAttrs>(node.attrs).log) return {sub(dy, mul(exp(y), reduce_sum(dy, {-1}, true)))};
  return {mul(y, sub(dy, reduce_sum(mul(dy, y), {-1}, true)))};
}

void lower_softmax(LowerContext& ctx) {
  const auto [rows, cols] = rows_cols(ctx.in_types[0]);
  const vk::RowOp op = ctx.attrs<SoftmaxAttrs>().log ? vk::RowOp::log_softmax : vk::RowOp::softmax;
  vk::row_op(ctx.recording, op, detail::u32(rows, ctx), detail::u32(cols, ctx), {.x = ctx.in[0], .out = ctx.out});
}

// The log-sum-exp of each row and the row's max.
double log_sum_exp(const double* row, std::int64_t cols) {
  double top = -std::numeric_limits<double>::infinity();
  for (std::int64_t c = 0; c < cols; ++c) top = std::max(top, row[c]);
  double sum = 0;
  for (std::int64_t c = 0; c < cols; ++c) sum += std::exp(row[c] - top);
  return top + std::log(sum);
}

RefTensor reference_softmax(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const bool log = std::get<SoftmaxAttrs>(node.attrs).log;
  RefTensor out = *in[0];
  const auto [rows, cols] = rows_cols(out.type);
  for (std::int64_t r = 0; r < rows; ++r) {
    double* row = out.values.data() + r * cols;
    const double lse = log_sum_exp(row, cols);
    for (std::int64_t c = 0; c < cols; ++c) row[c] = log ? row[c] - lse : std::exp(row[c] - lse);
  }
  return out;
}

// --- softmax_xent: logits [N, C], labels i32 [N] -> [N] ---

void check_logits_labels(const TensorType& logits, const TensorType& labels) {
  detail::require_f32(logits, "logits");
  if (logits.rank() != 2) detail::fail("logits must be [N, classes], got " + to_string(logits));
  if (labels.dtype != DType::i32 || labels.rank() != 1 || !detail::compatible(labels.dims[0], logits.dims[0]))
    detail::fail("labels must be i32 [N] for logits " + to_string(logits) + ", got " + to_string(labels));
}

TensorType infer_xent(const Node&, std::span<const TensorType> in) {
  check_logits_labels(in[0], in[1]);
  return f32({in[0].dims[0] >= 0 ? in[0].dims[0] : in[1].dims[0]});
}

std::vector<Tensor> grad_xent(const Node&, std::span<const Tensor> in, Tensor, Tensor dy) {
  return {in[0].graph().add(OpKind::softmax_xent_grad, {in[0], in[1], dy}), Tensor()};
}

void lower_xent(LowerContext& ctx) {
  const auto [rows, cols] = rows_cols(ctx.in_types[0]);
  vk::row_op(ctx.recording, vk::RowOp::xent, detail::u32(rows, ctx), detail::u32(cols, ctx),
             {.x = ctx.in[0], .labels = ctx.in[1], .out = ctx.out});
}

std::int64_t label_at(const RefTensor& labels, std::int64_t r, std::int64_t cols) {
  const double v = labels.values[static_cast<std::size_t>(r)];
  return v >= 0 && v < static_cast<double>(cols) ? static_cast<std::int64_t>(v) : -1;
}

RefTensor reference_xent(const Node&, std::span<const RefTensor* const> in, RefState&) {
  const auto [rows, cols] = rows_cols(in[0]->type);
  RefTensor out = RefTensor::zeros(f32({rows}));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = in[0]->values.data() + r * cols;
    const std::int64_t t = label_at(*in[1], r, cols);
    out.values[static_cast<std::size_t>(r)] = t < 0 ? NAN : log_sum_exp(row, cols) - row[t];
  }
  return out;
}

TensorType infer_xent_grad(const Node&, std::span<const TensorType> in) {
  check_logits_labels(in[0], in[1]);
  detail::require_f32(in[2], "dy");
  return in[0];
}

void lower_xent_grad(LowerContext& ctx) {
  const auto [rows, cols] = rows_cols(ctx.in_types[0]);
  vk::row_op(ctx.recording, vk::RowOp::xent_grad, detail::u32(rows, ctx), detail::u32(cols, ctx),
             {.x = ctx.in[0], .labels = ctx.in[1], .dy = ctx.in[2], .out = ctx.out});
}

RefTensor reference_xent_grad(const Node&, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = *in[0];
  const auto [rows, cols] = rows_cols(out.type);
  for (std::int64_t r = 0; r < rows; ++r) {
    double* row = out.values.data() + r * cols;
    const std::int64_t t = label_at(*in[1], r, cols);
    const double lse = log_sum_exp(row, cols), dy = in[2]->values[static_cast<std::size_t>(r)];
    for (std::int64_t c = 0; c < cols; ++c) row[c] = t < 0 ? NAN : dy * (std::exp(row[c] - lse) - (c == t ? 1.0 : 0.0));
  }
  return out;
}

// --- in_top_k: predictions [N, C], targets i32 [N] -> f32 [N] ---

TensorType infer_in_top_k(const Node&, std::span<const TensorType> in) {
  check_logits_labels(in[0], in[1]);
  return f32({in[0].dims[0] >= 0 ? in[0].dims[0] : in[1].dims[0]});
}

void lower_in_top_k(LowerContext& ctx) {
  const auto [rows, cols] = rows_cols(ctx.in_types[0]);
  vk::row_op(ctx.recording, vk::RowOp::in_top_k, detail::u32(rows, ctx), detail::u32(cols, ctx),
             {.x = ctx.in[0], .labels = ctx.in[1], .out = ctx.out}, detail::u32(ctx.attrs<InTopKAttrs>().k, ctx));
}

RefTensor reference_in_top_k(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const auto [rows, cols] = rows_cols(in[0]->type);
  const std::int64_t k = std::get<InTopKAttrs>(node.attrs).k;
  RefTensor out = RefTensor::zeros(f32({rows}));
  for (std::int64_t r = 0; r < rows; ++r) {
    const double* row = in[0]->values.data() + r * cols;
    const std::int64_t t = label_at(*in[1], r, cols);
    if (t < 0) continue;
    std::int64_t above = 0;
    bool finite = true;
    for (std::int64_t c = 0; c < cols; ++c) {
      above += row[c] > row[t] ? 1 : 0;
      finite = finite && std::isfinite(row[c]);
    }
    // A row with a NaN or infinite prediction is never in the top k (as TensorFlow).
    out.values[static_cast<std::size_t>(r)] = finite && above < k ? 1.0 : 0.0;
  }
  return out;
}

}  // namespace

extern const OpDef softmax_op{OpKind::softmax, "softmax", infer_softmax,    grad_softmax,
                              lower_softmax,   nullptr,   reference_softmax};
extern const OpDef softmax_xent_op{OpKind::softmax_xent, "softmax_xent", infer_xent,    grad_xent,
                                   lower_xent,           nullptr,        reference_xent};
// Second derivatives of the cross entropy are not implemented (grad nullptr).
extern const OpDef softmax_xent_grad_op{
    OpKind::softmax_xent_grad, "softmax_xent_grad", infer_xent_grad, nullptr, lower_xent_grad, nullptr,
    reference_xent_grad};
extern const OpDef in_top_k_op{OpKind::in_top_k, "in_top_k", infer_in_top_k,    detail::no_gradient,
                               lower_in_top_k,   nullptr,    reference_in_top_k};

Tensor softmax(Tensor x) { return x.graph().add(OpKind::softmax, {x}, SoftmaxAttrs{false}, "softmax"); }
Tensor log_softmax(Tensor x) { return x.graph().add(OpKind::softmax, {x}, SoftmaxAttrs{true}, "log_softmax"); }

Tensor sparse_softmax_cross_entropy(Tensor logits, Tensor labels) {
  Graph& g = logits.graph();
  if (logits.rank() <= 2) return g.add(OpKind::softmax_xent, {logits, labels}, NoAttrs{}, "cross_entropy");
  // [.., C] with labels [..]: rows of C, then the labels' shape back.
  bool fits = labels.rank() == logits.rank() - 1 && logits.dims().back() >= 0;
  for (int d = 0; fits && d < labels.rank(); ++d)
    fits = detail::compatible(labels.dims()[static_cast<std::size_t>(d)], logits.dims()[static_cast<std::size_t>(d)]);
  if (!fits)
    throw Error(ErrorCode::invalid_argument, "sparse_softmax_cross_entropy: labels " + to_string(labels.type()) +
                                                 " must be the leading dims of logits " + to_string(logits.type()) +
                                                 " (whose last axis must be known)");
  const Tensor rows = g.add(OpKind::softmax_xent, {reshape(logits, {-1, logits.dims().back()}), reshape(labels, {-1})},
                            NoAttrs{}, "cross_entropy");
  return g.add(OpKind::reshape, {rows, labels}, DimsAttrs{});
}

Tensor sparse_softmax_cross_entropy(Tensor logits, Tensor labels, Tensor weights) {
  const Tensor loss = sparse_softmax_cross_entropy(logits, labels);
  if (weights.dims() != labels.dims())
    throw Error(ErrorCode::invalid_argument, "sparse_softmax_cross_entropy: weights " + to_string(weights.type()) +
                                                 " must have the labels' shape " + to_string(labels.type()));
  // where() first: a masked position contributes exactly 0, whatever its loss.
  return mul(graph::where(weights, loss, scalar(logits.graph(), 0.0f)), weights);
}

Tensor softmax_cross_entropy(Tensor logits, Tensor labels) {
  if (logits.dims() != labels.dims() || logits.rank() < 1)
    throw Error(ErrorCode::invalid_argument, "softmax_cross_entropy: logits " + to_string(logits.type()) +
                                                 " and labels " + to_string(labels.type()) + " must have one shape");
  return neg(reduce_sum(mul(labels, log_softmax(logits)), {-1}));
}

Tensor sigmoid_cross_entropy(Tensor logits, Tensor labels) {
  if (logits.dims() != labels.dims())
    throw Error(ErrorCode::invalid_argument, "sigmoid_cross_entropy: logits " + to_string(logits.type()) +
                                                 " and labels " + to_string(labels.type()) + " differ");
  return logits.graph().add(OpKind::binary, {logits, labels}, BinaryAttrs{shaders::BinaryOp::sigmoid_xent},
                            "sigmoid_xent");
}

Tensor in_top_k(Tensor predictions, Tensor targets, std::int64_t k) {
  if (k < 1) throw Error(ErrorCode::invalid_argument, "in_top_k: k must be >= 1");
  return predictions.graph().add(OpKind::in_top_k, {predictions, targets}, InTopKAttrs{k});
}

Tensor accuracy(Tensor logits, Tensor labels) { return reduce_mean(in_top_k(logits, labels, 1)); }

}  // namespace vkp::graph
