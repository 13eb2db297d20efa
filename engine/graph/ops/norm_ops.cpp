// Batch normalization as fused ops over x viewed as [M, C] (channels last):
//   bn_stats       x -> [2, C] mean and biased variance       (2 reduction passes)
//   batch_norm     (x, stats, gamma, beta) -> y               (1 elementwise pass)
// and the gradient of batch_norm:
//   bn_grad_sums   (x, stats, dy) -> [2, C] sum dy, sum dy xhat  (2 reduction passes)
//   bn_grad_input  (x, stats, gamma, dy, sums) -> dx           (1 elementwise pass)
// With BatchNormAttrs::relu (BNReLU) batch_norm writes max(0, y), and its gradient ops
// take gamma and beta too (bn_grad_sums: x, stats, dy, gamma, beta; bn_grad_input: x,
// stats, gamma, dy, sums, beta) to mask dy where xhat * gamma + beta <= 0 themselves,
// without a pass of their own.
// Kernels: vk::batch_norm_stats, batch_norm_grad_sums, batch_norm_apply.
#include <algorithm>
#include <cmath>
#include <optional>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/batch_norm.h"
#include "engine/vk/kernels/copy.h"

namespace vkp::graph {
namespace {

using detail::fail;

// Rows and channels of x as [M, C].
std::pair<std::int64_t, std::int64_t> rows_channels(const TensorType& x) {
  if (x.rank() < 1) fail("batch normalization needs a channel axis, got " + to_string(x));
  const std::int64_t c = x.dim(-1), n = x.numel();
  return {c > 0 && n >= 0 ? n / c : kUnknown, c};
}

void require_per_channel(const TensorType& t, std::int64_t c, const char* what, int rows = 1) {
  detail::require_f32(t, what);
  const bool ok = rows == 1
                      ? (t.rank() == 1 && detail::compatible(t.dims[0], c))
                      : (t.rank() == 2 && detail::compatible(t.dims[0], rows) && detail::compatible(t.dims[1], c));
  if (!ok)
    fail(std::string(what) + " must be " + (rows == 1 ? "[C]" : "[2, C]") + " with C = " + std::to_string(c) +
         ", got " + to_string(t));
}

std::uint32_t u(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// The reference's per-channel statistics and xhat.
struct RefStats {
  std::vector<double> mean, rstd;
};
RefStats ref_stats(const RefTensor& stats, std::int64_t c, double eps) {
  RefStats s;
  for (std::int64_t i = 0; i < c; ++i) {
    s.mean.push_back(stats.values[static_cast<std::size_t>(i)]);
    s.rstd.push_back(1.0 / std::sqrt(stats.values[static_cast<std::size_t>(c + i)] + eps));
  }
  return s;
}

// --- bn_stats ---

TensorType infer_stats(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  return f32({2, rows_channels(in[0]).second});
}

// d/dx of (mean, var) with ds = (dmean, dvar): dmean / M + dvar * 2 (x - mean) / M, M
// counted at run time.
std::vector<Tensor> grad_stats(const Node&, std::span<const Tensor> in, Tensor stats, Tensor ds) {
  const Tensor x = in[0];
  Graph& g = x.graph();
  const std::int64_t c = x.dims().back();
  auto row = [&](Tensor t, std::int64_t r) { return reshape(slice(t, {r, 0}, {1, c}), {c}); };
  const Tensor ones = g.add(OpKind::broadcast_to, {scalar(g, 1.0f), x}, DimsAttrs{});
  const Tensor inv_m = div(scalar(g, static_cast<float>(c)), reduce_sum(ones));
  const Tensor centered = sub(x, row(stats, 0));
  return {mul(add(row(ds, 0), mul(mul(row(ds, 1), centered), scalar(g, 2.0f))), inv_m)};
}

std::size_t workspace_stats(const Node&, std::span<const TensorType> in, const TensorType&, const vk::Device&) {
  const auto [m, c] = rows_channels(in[0]);
  return vk::batch_norm_workspace_bytes(static_cast<std::uint64_t>(m), static_cast<std::uint64_t>(c));
}

void lower_stats(LowerContext& ctx) {
  const auto [m, c] = rows_channels(ctx.in_types[0]);
  vk::batch_norm_stats(ctx.recording, {.m = static_cast<std::uint64_t>(m), .c = u(c), .x = ctx.in[0], .stats = ctx.out},
                       ctx.workspace);
}

RefTensor reference_stats(const Node&, std::span<const RefTensor* const> in, RefState&) {
  const auto [m, c] = rows_channels(in[0]->type);
  RefTensor out = RefTensor::zeros(f32({2, c}));
  for (std::int64_t ch = 0; ch < c; ++ch) {
    double mean = 0, var = 0;
    for (std::int64_t r = 0; r < m; ++r)
      mean += in[0]->values[static_cast<std::size_t>(r * c + ch)] / static_cast<double>(m);
    for (std::int64_t r = 0; r < m; ++r) {
      const double d = in[0]->values[static_cast<std::size_t>(r * c + ch)] - mean;
      var += d * d / static_cast<double>(m);
    }
    out.values[static_cast<std::size_t>(ch)] = mean;
    out.values[static_cast<std::size_t>(c + ch)] = var;
  }
  return out;
}

// --- batch_norm: (x, stats, gamma, beta) ---

TensorType infer_batch_norm(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const std::int64_t c = rows_channels(in[0]).second;
  require_per_channel(in[1], c, "stats", 2);
  require_per_channel(in[2], c, "gamma");
  require_per_channel(in[3], c, "beta");
  return in[0];
}

std::vector<Tensor> grad_batch_norm(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const BatchNormAttrs& a = std::get<BatchNormAttrs>(node.attrs);
  const Tensor x = in[0], stats = in[1], gamma = in[2], beta = in[3];
  Graph& g = x.graph();
  const std::int64_t c = x.dims().back();
  // A fused ReLU: the gradient ops mask dy themselves, from gamma and beta.
  const Tensor sums = a.relu ? g.add(OpKind::bn_grad_sums, {x, stats, dy, gamma, beta}, a)
                             : g.add(OpKind::bn_grad_sums, {x, stats, dy}, a);
  // Global statistics: the input gradient takes the global batch's means of dy and
  // dy * xhat. bn_grad_input divides its sums by the tower's M_k, and tower k's dy is
  // N / M_k times the global batch's (its cost is a mean over M_k rows): the towers'
  // sums averaged with weights M_k / N give it exactly those. dgamma and dbeta stay the
  // tower's own, averaged with the other gradients.
  const Tensor shared = a.batch_stats && a.sync_statistics ? cross_tower_mean(sums) : sums;
  const Tensor dx = a.relu ? g.add(OpKind::bn_grad_input, {x, stats, gamma, dy, shared, beta}, a)
                           : g.add(OpKind::bn_grad_input, {x, stats, gamma, dy, shared}, a);
  auto row = [&](Tensor t, std::int64_t r) { return reshape(slice(t, {r, 0}, {1, c}), {c}); };
  const Tensor dbeta = row(sums, 0), dgamma = row(sums, 1);
  if (a.batch_stats) return {dx, Tensor(), dgamma, dbeta};
  // Fixed statistics: dmean = -gamma rstd sum dy; dvar = -gamma rstd^2 sum(dy xhat) / 2.
  const Tensor rstd = rsqrt(row(stats, 1) + a.epsilon);
  const Tensor dmean = neg(mul(mul(gamma, rstd), dbeta));
  const Tensor dvar = mul(mul(mul(gamma, square(rstd)), dgamma), scalar(g, -0.5f));
  return {dx, concat({reshape(dmean, {1, c}), reshape(dvar, {1, c})}, 0), dgamma, dbeta};
}

void lower_batch_norm(LowerContext& ctx) {
  const auto [m, c] = rows_channels(ctx.in_types[0]);
  const BatchNormAttrs& a = ctx.attrs<BatchNormAttrs>();
  const vk::BatchNormArgs args{.m = static_cast<std::uint64_t>(m),
                               .c = u(c),
                               .eps = a.epsilon,
                               .x = ctx.in[0],
                               .stats = ctx.in[1],
                               .gamma = ctx.in[2],
                               .beta = ctx.in[3],
                               .relu = a.relu};
  vk::batch_norm_apply(ctx.recording, vk::BatchNormMode::forward, args, ctx.out);
}

RefTensor reference_batch_norm(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const auto [m, c] = rows_channels(in[0]->type);
  const BatchNormAttrs& a = std::get<BatchNormAttrs>(node.attrs);
  const RefStats s = ref_stats(*in[1], c, a.epsilon);
  RefTensor out = *in[0];
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const auto ch = static_cast<std::size_t>(static_cast<std::int64_t>(i) % c);
    const double y = (out.values[i] - s.mean[ch]) * s.rstd[ch] * in[2]->values[ch] + in[3]->values[ch];
    out.values[i] = a.relu ? std::max(y, 0.0) : y;
  }
  return out;
}

// --- bn_grad_sums: (x, stats, dy) -> [sum dy; sum dy xhat] ---

// The fused ReLU's mask of element i (channel ch): whether xhat * gamma + beta > 0.
bool relu_passes(const RefTensor& x, const RefStats& s, const RefTensor& gamma, const RefTensor& beta, std::size_t i,
                 std::size_t ch) {
  return (x.values[i] - s.mean[ch]) * s.rstd[ch] * gamma.values[ch] + beta.values[ch] > 0;
}

void require_relu_inputs(const Node& node, std::span<const TensorType> in, std::size_t plain, std::int64_t c) {
  const bool relu = std::get<BatchNormAttrs>(node.attrs).relu;
  if (in.size() != plain + (relu ? 1 : 0) + (relu && plain == 3 ? 1 : 0))
    fail("wrong number of inputs for " + std::string(relu ? "a fused ReLU" : "no fused ReLU"));
  if (!relu) return;
  if (plain == 3) require_per_channel(in[3], c, "gamma");
  require_per_channel(in.back(), c, "beta");
}

TensorType infer_grad_sums(const Node& node, std::span<const TensorType> in) {
  const std::int64_t c = rows_channels(in[0]).second;
  require_per_channel(in[1], c, "stats", 2);
  if (in[2].dims != in[0].dims) fail("dy " + to_string(in[2]) + " does not match x " + to_string(in[0]));
  require_relu_inputs(node, in, 3, c);
  return f32({2, c});
}

std::size_t workspace_grad_sums(const Node& node, std::span<const TensorType> in, const TensorType& out,
                                const vk::Device& d) {
  return workspace_stats(node, in, out, d);
}

void lower_grad_sums(LowerContext& ctx) {
  const auto [m, c] = rows_channels(ctx.in_types[0]);
  const BatchNormAttrs& a = ctx.attrs<BatchNormAttrs>();
  vk::BatchNormArgs args{.m = static_cast<std::uint64_t>(m),
                         .c = u(c),
                         .eps = a.epsilon,
                         .x = ctx.in[0],
                         .stats = ctx.in[1],
                         .dy = ctx.in[2],
                         .sums = ctx.out,
                         .relu = a.relu};
  if (a.relu) args.gamma = ctx.in[3], args.beta = ctx.in[4];
  vk::batch_norm_grad_sums(ctx.recording, args, ctx.workspace);
}

RefTensor reference_grad_sums(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const auto [m, c] = rows_channels(in[0]->type);
  const BatchNormAttrs& a = std::get<BatchNormAttrs>(node.attrs);
  const RefStats s = ref_stats(*in[1], c, a.epsilon);
  RefTensor out = RefTensor::zeros(f32({2, c}));
  for (std::int64_t i = 0; i < m * c; ++i) {
    const auto ch = static_cast<std::size_t>(i % c);
    const auto at = static_cast<std::size_t>(i);
    const double d = a.relu && !relu_passes(*in[0], s, *in[3], *in[4], at, ch) ? 0.0 : in[2]->values[at];
    out.values[ch] += d;
    out.values[static_cast<std::size_t>(c) + ch] +=
        d * (in[0]->values[static_cast<std::size_t>(i)] - s.mean[ch]) * s.rstd[ch];
  }
  return out;
}

// --- bn_grad_input: (x, stats, gamma, dy, sums) -> dx ---

TensorType infer_grad_input(const Node& node, std::span<const TensorType> in) {
  const std::int64_t c = rows_channels(in[0]).second;
  require_per_channel(in[1], c, "stats", 2);
  require_per_channel(in[2], c, "gamma");
  require_per_channel(in[4], c, "sums", 2);
  if (in[3].dims != in[0].dims) fail("dy " + to_string(in[3]) + " does not match x " + to_string(in[0]));
  require_relu_inputs(node, in, 5, c);
  return in[0];
}

void lower_grad_input(LowerContext& ctx) {
  const BatchNormAttrs& a = ctx.attrs<BatchNormAttrs>();
  const auto [m, c] = rows_channels(ctx.in_types[0]);
  vk::BatchNormArgs args{.m = static_cast<std::uint64_t>(m),
                         .c = u(c),
                         .eps = a.epsilon,
                         .x = ctx.in[0],
                         .stats = ctx.in[1],
                         .gamma = ctx.in[2],
                         .dy = ctx.in[3],
                         .sums = ctx.in[4],
                         .relu = a.relu};
  if (a.relu) args.beta = ctx.in[5];
  const vk::BatchNormMode mode =
      a.batch_stats ? vk::BatchNormMode::grad_batch_statistics : vk::BatchNormMode::grad_fixed_statistics;
  vk::batch_norm_apply(ctx.recording, mode, args, ctx.out);
}

RefTensor reference_grad_input(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const BatchNormAttrs& a = std::get<BatchNormAttrs>(node.attrs);
  const auto [m, c] = rows_channels(in[0]->type);
  const RefStats s = ref_stats(*in[1], c, a.epsilon);
  RefTensor out = *in[0];
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const auto ch = static_cast<std::size_t>(static_cast<std::int64_t>(i) % c);
    const double scale = in[2]->values[ch] * s.rstd[ch];
    const double dy = a.relu && !relu_passes(*in[0], s, *in[2], *in[5], i, ch) ? 0.0 : in[3]->values[i];
    const double xhat = (in[0]->values[i] - s.mean[ch]) * s.rstd[ch];
    out.values[i] = a.batch_stats
                        ? scale * (dy - (in[4]->values[ch] + xhat * in[4]->values[static_cast<std::size_t>(c) + ch]) /
                                            static_cast<double>(m))
                        : scale * dy;
  }
  return out;
}

// --- bn_bessel: M / (M - 1), from x's concrete shape, written by one fill ---

double bessel(const TensorType& x) {
  const double m = static_cast<double>(rows_channels(x).first);
  return m > 1 ? m / (m - 1) : 1.0;
}

TensorType infer_bessel(const Node&, std::span<const TensorType> in) {
  rows_channels(in[0]);
  return f32({});
}

void lower_bessel(LowerContext& ctx) {
  vk::fill(ctx.recording, ctx.out, 1, static_cast<float>(bessel(ctx.in_types[0])));
}

RefTensor reference_bessel(const Node&, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = RefTensor::zeros(f32({}));
  out.values[0] = bessel(in[0]->type);
  return out;
}

}  // namespace

// A constant of the shape: no gradient flows through it (grad nullptr).
// Float16 (OpDef::f16): x and dy; statistics, sums, gamma and beta stay float32
// (bn_bessel reads x's shape only).
extern const OpDef bn_bessel_op{.kind = OpKind::bn_bessel,
                                .name = "bn_bessel",
                                .infer = infer_bessel,
                                .grad = nullptr,
                                .lower = lower_bessel,
                                .workspace = nullptr,
                                .reference = reference_bessel,
                                .f16 = {0b1, false}};
extern const OpDef bn_stats_op{.kind = OpKind::bn_stats,
                               .name = "bn_stats",
                               .infer = infer_stats,
                               .grad = grad_stats,
                               .lower = lower_stats,
                               .workspace = workspace_stats,
                               .reference = reference_stats,
                               .f16 = {0b1, false}};
extern const OpDef batch_norm_op{.kind = OpKind::batch_norm,
                                 .name = "batch_norm",
                                 .infer = infer_batch_norm,
                                 .grad = grad_batch_norm,
                                 .lower = lower_batch_norm,
                                 .workspace = nullptr,
                                 .reference = reference_batch_norm,
                                 .f16 = {0b1, true}};
// Second derivatives of batch normalization are not implemented (grad nullptr).
extern const OpDef bn_grad_sums_op{.kind = OpKind::bn_grad_sums,
                                   .name = "bn_grad_sums",
                                   .infer = infer_grad_sums,
                                   .grad = nullptr,
                                   .lower = lower_grad_sums,
                                   .workspace = workspace_grad_sums,
                                   .reference = reference_grad_sums,
                                   .f16 = {0b101, false}};
extern const OpDef bn_grad_input_op{.kind = OpKind::bn_grad_input,
                                    .name = "bn_grad_input",
                                    .infer = infer_grad_input,
                                    .grad = nullptr,
                                    .lower = lower_grad_input,
                                    .workspace = nullptr,
                                    .reference = reference_grad_input,
                                    .f16 = {0b1001, true}};

Tensor bn_stats(Tensor x) { return x.graph().add(OpKind::bn_stats, {x}); }

Tensor bn_bessel(Tensor x) { return x.graph().add(OpKind::bn_bessel, {x}); }

Tensor batch_norm(Tensor x, Tensor stats, Tensor gamma, Tensor beta, const BatchNormAttrs& how) {
  return x.graph().add(OpKind::batch_norm, {x, stats, gamma, beta}, how);
}

}  // namespace vkp::graph
