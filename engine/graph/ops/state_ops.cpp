// Ops that change variables, run after everything else in a step: assign (variable <-
// value) and apply_optimizer (a fused in-place update). Kernels: a buffer copy,
// vk::optimizer_update.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/graph/optimizer_table.h"
#include "engine/vk/kernels/training.h"

namespace vkp::graph {
namespace {

// A side effect's output: no elements, no storage.
const TensorType kNothing = f32({0});

const VariableAttrs& variable_of(const Graph& graph, const Node& node, std::size_t input) {
  const Node& v = graph.node(node.inputs[input]);
  if (v.op != OpKind::variable) detail::fail("input " + std::to_string(input) + " '" + v.name + "' is not a variable");
  return std::get<VariableAttrs>(v.attrs);
}

TensorType infer_assign(const Node&, std::span<const TensorType> in) {
  if (in[0].dims != in[1].dims || in[0].dtype != in[1].dtype)
    detail::fail("cannot assign " + to_string(in[1]) + " to a variable of " + to_string(in[0]));
  return kNothing;
}

void lower_assign(LowerContext& ctx) { ctx.recording.copy(ctx.in[1], ctx.in[0].sub(0, ctx.in[1].size)); }

RefTensor reference_assign(const Node& node, std::span<const RefTensor* const> in, RefState& state) {
  state.variables[variable_of(*state.graph, node, 0).var_name] = *in[1];
  return RefTensor::zeros(kNothing);
}

TensorType infer_optimizer(const Node& node, std::span<const TensorType> in) {
  const OptimizerKind kind = std::get<OptimizerAttrs>(node.attrs).kind;
  const bool guarded = std::get<OptimizerAttrs>(node.attrs).guarded;
  if (guarded && (in.empty() || in.back().dims != std::vector<std::int64_t>{2}))
    detail::fail("takes a guard [2] last; got " + (in.empty() ? std::string("no inputs") : to_string(in.back())));
  for (std::size_t i = 1; i + (guarded ? 1 : 0) < in.size(); ++i)
    if (in[i].dims != in[0].dims)
      detail::fail("input " + std::to_string(i) + " " + to_string(in[i]) + " does not match the variable " +
                   to_string(in[0]));
  const std::size_t slots = optimizer_spec(kind).slot_count;
  if (in.size() != 2 + slots + (guarded ? 1 : 0))
    detail::fail("takes the variable, its gradient and " + std::to_string(slots) + " slot variables" +
                 (guarded ? ", then a guard" : ""));
  return kNothing;
}

void lower_optimizer(LowerContext& ctx) {
  const OptimizerAttrs& a = ctx.attrs<OptimizerAttrs>();
  const vk::OptimizerPush push{static_cast<std::uint32_t>(ctx.in_types[0].numel()),
                               a.learning_rate,
                               a.momentum,
                               a.beta2,
                               a.epsilon,
                               a.weight_decay,
                               a.step_factor};
  const vk::BufferSlice& var = ctx.in[0];
  const std::size_t slots = ctx.in.size() - 2 - (a.guarded ? 1 : 0);
  vk::optimizer_update(ctx.recording, a.kind, push,
                       {.var = var,
                        .grad = ctx.in[1],
                        .slot1 = slots > 0 ? ctx.in[2] : var,
                        .slot2 = slots > 1 ? ctx.in[3] : var,
                        .scalars = ctx.scalars,
                        .guard = a.guarded ? ctx.in.back() : vk::BufferSlice{}});
}

double word(const RefState& state, std::uint32_t at) { return state.scalars.at(at); }

// The published update rules, TensorFlow's (which tensorpack trains with), in double:
//   sgd       (GradientDescentOptimizer)  v -= lr g
//   momentum  (MomentumOptimizer)         m = mu m + g;  v -= lr m
//   nesterov  (MomentumOptimizer, use_nesterov)  m = mu m + g;  v -= lr (g + mu m)
//   adam      (AdamOptimizer, Kingma and Ba's algorithm with TensorFlow's epsilon placement:
//             epsilon is added to sqrt of the uncorrected second moment, the bias correction
//             folded into the step size)  m = b1 m + (1 - b1) g;  s = b2 s + (1 - b2) g^2;
//             v -= lr sqrt(1 - b2^t) / (1 - b1^t) m / (sqrt(s) + eps),  t = global step + 1
//   adamw     adam, then v -= lr wd v_before (PyTorch's AdamW decoupled weight decay)
//   rmsprop   (RMSPropOptimizer, centered=False; its rms slot starts at 1)
//             ms = rho ms + (1 - rho) g^2;  mom = mu mom + lr g / sqrt(ms + eps);  v -= mom
//   adagrad   (AdagradOptimizer; its accumulator starts at initial_accumulator_value)
//             acc += g^2;  v -= lr g / sqrt(acc)
RefTensor reference_optimizer(const Node& node, std::span<const RefTensor* const> in, RefState& state) {
  const Graph& graph = *state.graph;
  const OptimizerAttrs& a = std::get<OptimizerAttrs>(node.attrs);
  // A guarded update with non-finite gradients leaves everything as it was.
  if (a.guarded && in.back()->values[0] != 0.0) return RefTensor::zeros(kNothing);
  const double factor = a.guarded ? in.back()->values[1] : 1.0;
  const std::size_t slots = in.size() - 2 - (a.guarded ? 1 : 0);
  RefTensor var = *in[0];
  RefTensor slot1 = slots > 0 ? *in[2] : RefTensor{}, slot2 = slots > 1 ? *in[3] : RefTensor{};
  const double lr = word(state, a.learning_rate), t = word(state, Graph::kStepWord) + 1;
  for (std::size_t i = 0; i < var.values.size(); ++i) {
    const double g = in[1]->values[i] * factor;
    double& v = var.values[i];
    switch (a.kind) {
      case OptimizerKind::sgd: v -= lr * g; break;
      case OptimizerKind::momentum:
      case OptimizerKind::nesterov: {
        const double mu = word(state, a.momentum);
        double& m = slot1.values[i];
        m = mu * m + g;
        v -= lr * (a.kind == OptimizerKind::nesterov ? g + mu * m : m);
        break;
      }
      case OptimizerKind::adam:
      case OptimizerKind::adamw: {
        const double b1 = word(state, a.momentum), b2 = word(state, a.beta2), eps = word(state, a.epsilon);
        double &m = slot1.values[i], &s = slot2.values[i];
        m = b1 * m + (1 - b1) * g;
        s = b2 * s + (1 - b2) * g * g;
        const double step = lr * std::sqrt(1 - std::pow(b2, t)) / (1 - std::pow(b1, t));
        const double old = v;
        v = old - step * m / (std::sqrt(s) + eps);
        if (a.kind == OptimizerKind::adamw) v -= lr * word(state, a.weight_decay) * old;
        break;
      }
      case OptimizerKind::rmsprop: {
        const double rho = word(state, a.beta2), mu = word(state, a.momentum), eps = word(state, a.epsilon);
        double &ms = slot1.values[i], &mom = slot2.values[i];
        ms = rho * ms + (1 - rho) * g * g;
        mom = mu * mom + lr * g / std::sqrt(ms + eps);
        v -= mom;
        break;
      }
      case OptimizerKind::adagrad: {
        double& acc = slot1.values[i];
        acc += g * g;
        v -= lr * g / std::sqrt(acc);
        break;
      }
    }
  }
  state.variables[variable_of(graph, node, 0).var_name] = var;
  if (slots > 0) state.variables[variable_of(graph, node, 2).var_name] = slot1;
  if (slots > 1) state.variables[variable_of(graph, node, 3).var_name] = slot2;
  return RefTensor::zeros(kNothing);
}

}  // namespace

// Second derivatives through updates are meaningless (grad nullptr).
extern const OpDef assign_op{.kind = OpKind::assign,
                             .name = "assign",
                             .infer = infer_assign,
                             .grad = nullptr,
                             .lower = lower_assign,
                             .workspace = nullptr,
                             .reference = reference_assign,
                             .side_effect = true};
extern const OpDef apply_optimizer_op{.kind = OpKind::apply_optimizer,
                                      .name = "apply_optimizer",
                                      .infer = infer_optimizer,
                                      .grad = nullptr,
                                      .lower = lower_optimizer,
                                      .workspace = nullptr,
                                      .reference = reference_optimizer,
                                      .side_effect = true};

Tensor assign(Tensor variable, Tensor value) {
  if (variable.node().op != OpKind::variable)
    throw Error(ErrorCode::invalid_argument, "assign: '" + variable.name() + "' is not a variable");
  return variable.graph().add(OpKind::assign, {variable, value});
}

}  // namespace vkp::graph
