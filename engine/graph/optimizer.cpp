#include "vkpack/engine/graph/optimizer.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "vkpack/core/error.h"
#include "vkpack/engine/graph/initializer.h"

namespace vkp::graph {
namespace {

// A zero-initialized, non-trainable slot named exactly `name` (no scope prefix), shared
// when it exists already (several towers minimizing the same variables).
Tensor slot(Graph& graph, const std::string& name, const TensorType& type) {
  if (Tensor existing = graph.find_variable(name); existing.valid()) return existing;
  const Tensor v = graph.add(OpKind::variable, {}, VariableAttrs{name, type, zeros(), false}, "slot");
  graph.register_variable(v);
  return v;
}

}  // namespace

std::vector<Tensor> Optimizer::apply_gradients(const std::vector<GradAndVar>& grads) const {
  std::vector<Tensor> updates;
  for (const auto& [grad, var] : grads) {
    if (!grad.valid()) continue;
    if (var.node().op != OpKind::variable)
      throw Error(ErrorCode::invalid_argument, "apply_gradients: '" + var.name() + "' is not a variable");
    // A copy: slot() adds nodes, which may move the variable's node and its attrs.
    const std::string name = std::get<VariableAttrs>(var.node().attrs).var_name;
    std::vector<Tensor> inputs{var, grad};
    switch (attrs_.kind) {
      case OptimizerKind::sgd: break;
      case OptimizerKind::momentum:
      case OptimizerKind::nesterov: inputs.push_back(slot(*graph_, name + "/Momentum", var.type())); break;
      case OptimizerKind::adam:
      case OptimizerKind::adamw:
        inputs.push_back(slot(*graph_, name + "/Adam", var.type()));
        inputs.push_back(slot(*graph_, name + "/Adam_1", var.type()));
        break;
    }
    updates.push_back(graph_->add(OpKind::apply_optimizer, inputs, attrs_, "update_" + name));
  }
  return updates;
}

std::vector<Tensor> Optimizer::minimize(Tensor cost, const std::vector<GradientProcessor>& processors) const {
  const std::vector<Tensor> vars = graph_->trainable_variables();
  if (vars.empty()) throw Error(ErrorCode::invalid_argument, "minimize: the graph has no trainable variables");
  const std::vector<Tensor> grads = gradients(cost, vars);
  std::vector<GradAndVar> pairs;
  for (std::size_t i = 0; i < vars.size(); ++i) pairs.emplace_back(grads[i], vars[i]);
  pairs = filter_none(std::move(pairs));
  if (pairs.empty())
    throw Error(ErrorCode::invalid_argument, "minimize: cost '" + cost.name() + "' depends on no trainable variable");
  for (const GradientProcessor& process : processors) pairs = process(std::move(pairs));
  std::vector<Tensor> train = apply_gradients(pairs);
  for (const Tensor& t : graph_->collection(kUpdateOps)) train.push_back(t);
  return train;
}

namespace {

// A hyperparameter's value, or Error(invalid_argument) naming the optimizer, the
// hyperparameter and the range it must lie in: [low, high), or [low, high] with `closed`.
float in_range(const char* optimizer, const char* name, float value, float low, float high, bool closed = false) {
  const bool fits = std::isfinite(value) && value >= low && (closed ? value <= high : value < high);
  if (!fits)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: {} is {}; it must be a finite number in [{}, {}{}", optimizer, name, value, low,
                            std::isinf(high) ? "inf" : fmt::format("{}", high), closed ? "]" : ")"));
  return value;
}

constexpr float kNoLimit = std::numeric_limits<float>::infinity();

}  // namespace

Optimizer sgd(Graph& graph, float learning_rate) {
  in_range("sgd", "learning_rate", learning_rate, 0.0f, kNoLimit);
  OptimizerAttrs a;
  a.kind = OptimizerKind::sgd;
  a.learning_rate = graph.hyperparameter("learning_rate", learning_rate);
  return Optimizer(graph, a);
}

Optimizer momentum(Graph& graph, float learning_rate, float mu, bool nesterov) {
  const char* name = nesterov ? "nesterov momentum" : "momentum";
  in_range(name, "learning_rate", learning_rate, 0.0f, kNoLimit);
  in_range(name, "momentum", mu, 0.0f, 1.0f, /*closed=*/true);
  OptimizerAttrs a;
  a.kind = nesterov ? OptimizerKind::nesterov : OptimizerKind::momentum;
  a.learning_rate = graph.hyperparameter("learning_rate", learning_rate);
  a.momentum = graph.hyperparameter("momentum", mu);
  return Optimizer(graph, a);
}

Optimizer adam(Graph& graph, float learning_rate, float beta1, float beta2, float epsilon) {
  in_range("adam", "learning_rate", learning_rate, 0.0f, kNoLimit);
  in_range("adam", "beta1", beta1, 0.0f, 1.0f);
  in_range("adam", "beta2", beta2, 0.0f, 1.0f);
  in_range("adam", "epsilon", epsilon, 0.0f, kNoLimit);
  OptimizerAttrs a;
  a.kind = OptimizerKind::adam;
  a.learning_rate = graph.hyperparameter("learning_rate", learning_rate);
  a.momentum = graph.hyperparameter("beta1", beta1);
  a.beta2 = graph.hyperparameter("beta2", beta2);
  a.epsilon = graph.hyperparameter("epsilon", epsilon);
  a.step_factor = Graph::kAdamStepWord;
  return Optimizer(graph, a);
}

Optimizer adamw(Graph& graph, float learning_rate, float weight_decay, float beta1, float beta2, float epsilon) {
  in_range("adamw", "weight_decay", weight_decay, 0.0f, kNoLimit);
  Optimizer o = adam(graph, learning_rate, beta1, beta2, epsilon);
  o.attrs_.kind = OptimizerKind::adamw;
  o.attrs_.weight_decay = graph.hyperparameter("weight_decay", weight_decay);
  return o;
}

float adam_step_factor(float learning_rate, float beta1, float beta2, std::uint64_t t) {
  const double steps = static_cast<double>(t);
  return static_cast<float>(double{learning_rate} * std::sqrt(1.0 - std::pow(double{beta2}, steps)) /
                            (1.0 - std::pow(double{beta1}, steps)));
}

}  // namespace vkp::graph
