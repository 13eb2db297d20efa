// Elementwise ops: unary functions and binary operators with numpy broadcasting.
// Kernels: vk::unary, vk::binary, vk::binary_scalar (when an operand is a scalar constant).
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/elementwise.h"

namespace vkp::graph {
namespace {

using shaders::BinaryOp;
using shaders::UnaryOp;

// --- unary ---

TensorType infer_unary(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  return in[0];
}

Tensor binary_node(BinaryOp fn, Tensor a, Tensor b, float alpha = 0.0f) {
  return a.graph().add(OpKind::binary, {a, b}, BinaryAttrs{fn, alpha}, shaders::to_string(fn));
}

std::vector<Tensor> grad_unary(const Node& node, std::span<const Tensor> in, Tensor y, Tensor dy) {
  const UnaryAttrs& a = std::get<UnaryAttrs>(node.attrs);
  const Tensor x = in[0];
  switch (a.fn) {
    // relu and leaky relu (slope >= 0) read their output: y > 0 exactly where x > 0, and
    // then x itself dies at the activation, which lets a matmul absorb it (fusion.h).
    case UnaryOp::relu: return {binary_node(BinaryOp::relu_grad, y, dy)};
    case UnaryOp::leaky_relu: return {binary_node(BinaryOp::leaky_relu_grad, a.alpha >= 0 ? y : x, dy, a.alpha)};
    case UnaryOp::elu: return {binary_node(BinaryOp::elu_grad, x, dy, a.alpha)};
    case UnaryOp::gelu: return {binary_node(BinaryOp::gelu_grad, x, dy)};
    case UnaryOp::sigmoid: return {binary_node(BinaryOp::sigmoid_grad, y, dy)};
    case UnaryOp::tanh: return {binary_node(BinaryOp::tanh_grad, y, dy)};
    case UnaryOp::sqrt: return {binary_node(BinaryOp::sqrt_grad, y, dy)};
    case UnaryOp::rsqrt: return {binary_node(BinaryOp::rsqrt_grad, y, dy)};
    case UnaryOp::abs: return {binary_node(BinaryOp::abs_grad, x, dy)};
    case UnaryOp::exp: return {mul(dy, y)};
    case UnaryOp::log: return {div(dy, x)};
    case UnaryOp::neg: return {neg(dy)};
    case UnaryOp::square: return {mul(dy, x) * 2.0f};
    case UnaryOp::floor:
    case UnaryOp::round: return {a.straight_through ? dy : Tensor()};
  }
  return {Tensor()};
}

void lower_unary(LowerContext& ctx) {
  const UnaryAttrs& a = ctx.attrs<UnaryAttrs>();
  vk::unary(ctx.recording, a.fn, static_cast<std::uint64_t>(ctx.out_type.numel()), ctx.in[0], ctx.out, a.alpha);
}

double unary_value(UnaryOp fn, double x, double alpha) {
  switch (fn) {
    case UnaryOp::relu: return x > 0 ? x : 0.0;
    case UnaryOp::sigmoid: return 1.0 / (1.0 + std::exp(-x));
    case UnaryOp::tanh: return std::tanh(x);
    case UnaryOp::exp: return std::exp(x);
    case UnaryOp::log: return std::log(x);
    case UnaryOp::sqrt: return std::sqrt(x);
    case UnaryOp::rsqrt: return 1.0 / std::sqrt(x);
    case UnaryOp::neg: return -x;
    case UnaryOp::abs: return std::abs(x);
    case UnaryOp::square: return x * x;
    case UnaryOp::leaky_relu: return x > 0 ? x : alpha * x;
    case UnaryOp::elu: return x > 0 ? x : alpha * std::expm1(x);
    case UnaryOp::gelu: return x * 0.5 * std::erfc(-x / std::sqrt(2.0));
    case UnaryOp::floor: return std::floor(x);
    case UnaryOp::round: return std::nearbyint(x);  // the default rounding mode: halves to even
  }
  return NAN;
}

RefTensor reference_unary(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const UnaryAttrs& a = std::get<UnaryAttrs>(node.attrs);
  RefTensor out = *in[0];
  for (double& v : out.values) v = unary_value(a.fn, v, a.alpha);
  return out;
}

// --- binary ---

TensorType infer_binary(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the first operand");
  detail::require_f32(in[1], "the second operand");
  return f32(broadcast_dims(in[0].dims, in[1].dims));
}

std::vector<Tensor> grad_binary(const Node& node, std::span<const Tensor> in, Tensor y, Tensor dy) {
  const BinaryOp fn = std::get<BinaryAttrs>(node.attrs).fn;
  const Tensor a = in[0], b = in[1];
  auto to_a = [&](Tensor g) { return detail::sum_to(g, a); };
  auto to_b = [&](Tensor g) { return detail::sum_to(g, b); };
  switch (fn) {
    case BinaryOp::add: return {to_a(dy), to_b(dy)};
    case BinaryOp::sub: return {to_a(dy), to_b(neg(dy))};
    case BinaryOp::mul: return {to_a(mul(dy, b)), to_b(mul(dy, a))};
    case BinaryOp::div: return {to_a(div(dy, b)), to_b(neg(div(mul(dy, y), b)))};
    case BinaryOp::max: {
      const Tensor a_wins = binary_node(BinaryOp::greater_equal, a, b);
      return {to_a(mul(dy, a_wins)), to_b(sub(dy, mul(dy, a_wins)))};
    }
    case BinaryOp::min: {
      const Tensor a_wins = binary_node(BinaryOp::greater_equal, b, a);
      return {to_a(mul(dy, a_wins)), to_b(sub(dy, mul(dy, a_wins)))};
    }
    case BinaryOp::pow: {
      // d/da = b a^(b-1); d/db = a^b log a where a > 0, else 0 (as TensorFlow).
      Graph& g = a.graph();
      const Tensor da = mul(mul(dy, b), pow(a, sub(b, scalar(g, 1.0f))));
      const Tensor tiny = scalar(g, 1e-30f);
      const Tensor positive = binary_node(BinaryOp::greater_equal, a, tiny);
      const Tensor db = mul(mul(mul(dy, y), log(maximum(a, tiny))), positive);
      return {to_a(da), to_b(db)};
    }
    case BinaryOp::sigmoid_xent:
      return {to_a(mul(dy, binary_node(BinaryOp::sigmoid_xent_grad, a, b))), to_b(mul(dy, neg(a)))};
    case BinaryOp::keep: return {to_a(binary_node(BinaryOp::keep, dy, b)), Tensor()};
    case BinaryOp::greater_equal:
    case BinaryOp::equal: return detail::no_gradients(2);
    default:
      throw Error(ErrorCode::unsupported, node.name + ": second derivatives (of " +
                                              std::string(shaders::to_string(fn)) + ") are not implemented");
  }
}

// The value of a scalar constant input, if input i is one.
const Node* scalar_constant(const LowerContext& ctx, int i) {
  const Node& input = ctx.graph.node(ctx.node.inputs[static_cast<std::size_t>(i)]);
  if (input.op != OpKind::constant || ctx.in_types[static_cast<std::size_t>(i)].numel() != 1) return nullptr;
  return &input;
}

void lower_binary(LowerContext& ctx) {
  const BinaryAttrs& a = ctx.attrs<BinaryAttrs>();
  const bool scalar_op = a.fn <= BinaryOp::pow;  // the ops with a scalar-operand mode
  const auto n = static_cast<std::uint64_t>(ctx.out_type.numel());
  if (scalar_op) {
    if (const Node* c = scalar_constant(ctx, 1); c && ctx.in_types[0].numel() == ctx.out_type.numel()) {
      vk::binary_scalar(ctx.recording, a.fn, n, ctx.in[0], {std::get<ConstantAttrs>(c->attrs).value.data<float>()[0]},
                        ctx.out);
      return;
    }
    if (const Node* c = scalar_constant(ctx, 0); c && ctx.in_types[1].numel() == ctx.out_type.numel()) {
      vk::binary_scalar(ctx.recording, a.fn, n, ctx.in[1],
                        {.value = std::get<ConstantAttrs>(c->attrs).value.data<float>()[0], .first = true}, ctx.out);
      return;
    }
  }
  vk::binary(ctx.recording, a.fn, {ctx.in_types[0].shape(), ctx.in[0]}, {ctx.in_types[1].shape(), ctx.in[1]}, ctx.out,
             a.alpha);
}

double sigmoid_value(double x) { return 1.0 / (1.0 + std::exp(-x)); }

double binary_value(BinaryOp fn, double u, double v, double alpha) {
  switch (fn) {
    case BinaryOp::add: return u + v;
    case BinaryOp::sub: return u - v;
    case BinaryOp::mul: return u * v;
    case BinaryOp::div: return u / v;
    case BinaryOp::max: return std::max(u, v);
    case BinaryOp::min: return std::min(u, v);
    case BinaryOp::pow: return std::pow(u, v);
    case BinaryOp::relu_grad: return u > 0 ? v : 0.0;
    case BinaryOp::sigmoid_grad: return v * u * (1 - u);
    case BinaryOp::tanh_grad: return v * (1 - u * u);
    case BinaryOp::sqrt_grad: return v * 0.5 / u;
    case BinaryOp::rsqrt_grad: return -0.5 * v * u * u * u;
    case BinaryOp::leaky_relu_grad: return u > 0 ? v : alpha * v;
    case BinaryOp::elu_grad: return u > 0 ? v : v * alpha * std::exp(u);
    case BinaryOp::abs_grad: return u > 0 ? v : (u < 0 ? -v : 0.0);
    case BinaryOp::greater_equal: return u >= v ? 1.0 : 0.0;
    case BinaryOp::equal: return u == v ? 1.0 : 0.0;
    case BinaryOp::sigmoid_xent: return std::max(u, 0.0) - u * v + std::log1p(std::exp(-std::abs(u)));
    case BinaryOp::sigmoid_xent_grad: return sigmoid_value(u) - v;
    case BinaryOp::gelu_grad:
      return v * (0.5 * std::erfc(-u / std::sqrt(2.0)) + u * std::exp(-0.5 * u * u) / std::sqrt(2.0 * std::acos(-1.0)));
    case BinaryOp::keep: return v != 0 ? u : 0.0;
  }
  return NAN;
}

RefTensor reference_binary(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const BinaryAttrs& a = std::get<BinaryAttrs>(node.attrs);
  const RefTensor &x = *in[0], &y = *in[1];
  RefTensor out = RefTensor::zeros(f32(broadcast_dims(x.type.dims, y.type.dims)));
  detail::for_each_broadcast(
      out.type.dims, x.type.dims, y.type.dims, [&](std::int64_t i, std::int64_t ia, std::int64_t ib) {
        out.values[static_cast<std::size_t>(i)] =
            binary_value(a.fn, x.values[static_cast<std::size_t>(ia)], y.values[static_cast<std::size_t>(ib)], a.alpha);
      });
  return out;
}

Tensor unary_node(UnaryOp fn, Tensor x, float alpha = 0.0f, bool straight_through = false) {
  return x.graph().add(OpKind::unary, {x}, UnaryAttrs{fn, alpha, straight_through}, shaders::to_string(fn));
}

}  // namespace

// Float16 (OpDef::f16): the elementwise kernels read and write either width.
extern const OpDef unary_op{.kind = OpKind::unary,
                            .name = "unary",
                            .infer = infer_unary,
                            .grad = grad_unary,
                            .lower = lower_unary,
                            .workspace = nullptr,
                            .reference = reference_unary,
                            .f16 = {0b1, true}};
extern const OpDef binary_op{.kind = OpKind::binary,
                             .name = "binary",
                             .infer = infer_binary,
                             .grad = grad_binary,
                             .lower = lower_binary,
                             .workspace = nullptr,
                             .reference = reference_binary,
                             .f16 = {0b11, true}};

Tensor relu(Tensor x) { return unary_node(UnaryOp::relu, x); }
Tensor leaky_relu(Tensor x, float alpha) { return unary_node(UnaryOp::leaky_relu, x, alpha); }
Tensor elu(Tensor x, float alpha) { return unary_node(UnaryOp::elu, x, alpha); }
Tensor gelu(Tensor x) { return unary_node(UnaryOp::gelu, x, 0.0f); }
Tensor sigmoid(Tensor x) { return unary_node(UnaryOp::sigmoid, x); }
Tensor tanh(Tensor x) { return unary_node(UnaryOp::tanh, x); }
Tensor exp(Tensor x) { return unary_node(UnaryOp::exp, x); }
Tensor log(Tensor x) { return unary_node(UnaryOp::log, x); }
Tensor sqrt(Tensor x) { return unary_node(UnaryOp::sqrt, x); }
Tensor rsqrt(Tensor x) { return unary_node(UnaryOp::rsqrt, x); }
Tensor neg(Tensor x) { return unary_node(UnaryOp::neg, x); }
Tensor abs(Tensor x) { return unary_node(UnaryOp::abs, x); }
Tensor square(Tensor x) { return unary_node(UnaryOp::square, x); }
Tensor floor(Tensor x, bool straight_through) { return unary_node(UnaryOp::floor, x, 0.0f, straight_through); }
Tensor round(Tensor x, bool straight_through) { return unary_node(UnaryOp::round, x, 0.0f, straight_through); }

Tensor add(Tensor a, Tensor b) { return binary_node(BinaryOp::add, a, b); }
Tensor sub(Tensor a, Tensor b) { return binary_node(BinaryOp::sub, a, b); }
Tensor mul(Tensor a, Tensor b) { return binary_node(BinaryOp::mul, a, b); }
Tensor div(Tensor a, Tensor b) { return binary_node(BinaryOp::div, a, b); }
Tensor maximum(Tensor a, Tensor b) { return binary_node(BinaryOp::max, a, b); }
Tensor minimum(Tensor a, Tensor b) { return binary_node(BinaryOp::min, a, b); }
Tensor pow(Tensor a, Tensor b) { return binary_node(BinaryOp::pow, a, b); }
Tensor operator+(Tensor a, Tensor b) { return add(a, b); }
Tensor operator-(Tensor a, Tensor b) { return sub(a, b); }
Tensor operator*(Tensor a, Tensor b) { return mul(a, b); }
Tensor operator/(Tensor a, Tensor b) { return div(a, b); }
Tensor operator*(Tensor a, float s) { return mul(a, scalar(a.graph(), s)); }
Tensor operator*(float s, Tensor a) { return mul(scalar(a.graph(), s), a); }
Tensor operator+(Tensor a, float s) { return add(a, scalar(a.graph(), s)); }
Tensor operator-(Tensor a) { return neg(a); }

Tensor where(Tensor condition, Tensor a, Tensor b) {
  Graph& g = condition.graph();
  const Tensor otherwise = binary_node(BinaryOp::equal, condition, scalar(g, 0.0f));
  return add(binary_node(BinaryOp::keep, a, condition), binary_node(BinaryOp::keep, b, otherwise));
}

Tensor clip_by_value(Tensor x, float low, float high) {
  if (!(low <= high))
    throw Error(ErrorCode::invalid_argument, "clip_by_value: the lower bound " + std::to_string(low) +
                                                 " is above the upper bound " + std::to_string(high));
  return minimum(maximum(x, scalar(x.graph(), low)), scalar(x.graph(), high));
}

Tensor bias_add(Tensor x, Tensor b) {
  if (b.rank() != 1 || !detail::compatible(b.dims()[0], x.dims().empty() ? -1 : x.dims().back()))
    throw Error(ErrorCode::invalid_argument,
                "bias_add: bias " + to_string(b.type()) + " must be one value per channel of " + to_string(x.type()));
  return x.graph().add(OpKind::binary, {x, b}, BinaryAttrs{BinaryOp::add, 0.0f}, "bias_add");
}

}  // namespace vkp::graph
