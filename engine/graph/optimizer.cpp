#include "engine/graph/optimizer.h"

#include <cmath>
#include <limits>

#include <fmt/format.h>

#include "core/error.h"
#include "engine/graph/initializer.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer_table.h"

namespace vkp::graph {
namespace {

// A zero-initialized, non-trainable slot named exactly `name` (no scope prefix), shared
// when it exists already (several towers minimizing the same variables).
Tensor slot(Graph& graph, const std::string& name, const TensorType& type, float initial) {
  if (Tensor existing = graph.find_variable(name); existing.valid()) return existing;
  const Tensor v = graph.add(OpKind::variable, {}, VariableAttrs{name, type, constant(initial), false}, "slot");
  graph.register_variable(v);
  graph.add_to_collection(kOptimizerSlots, v);
  return v;
}

}  // namespace

std::vector<Tensor> Optimizer::apply_gradients(const std::vector<GradAndVar>& grads) const {
  return apply_gradients(grads, Tensor());
}

std::vector<Tensor> Optimizer::apply_gradients(const std::vector<GradAndVar>& given, Tensor guard) const {
  const std::vector<GradAndVar> grads = process_gradients(processors_, given);
  if (accumulation_steps_ > 1) {
    if (guard.valid())
      throw Error(ErrorCode::unsupported,
                  "apply_gradients: accumulated gradients (accumulate_gradients) cannot also be loss-scaled");
    return apply_accumulated(grads);
  }
  OptimizerAttrs attrs = attrs_;
  attrs.guarded = guard.valid();
  std::vector<Tensor> updates;
  for (const auto& [grad, var] : grads) {
    if (!grad.valid()) continue;
    if (var.node().op != OpKind::variable)
      throw Error(ErrorCode::invalid_argument, "apply_gradients: '" + var.name() + "' is not a variable");
    // A copy: slot() adds nodes, which may move the variable's node and its attrs.
    const std::string name = std::get<VariableAttrs>(var.node().attrs).var_name;
    std::vector<Tensor> inputs{var, grad};
    const std::vector<std::string> slots = optimizer_slot_names(attrs_.kind, name);
    for (std::size_t i = 0; i < slots.size(); ++i) inputs.push_back(slot(*graph_, slots[i], var.type(), slot_init_[i]));
    if (guard.valid()) inputs.push_back(guard);
    updates.push_back(graph_->add(OpKind::apply_optimizer, inputs, attrs, "update_" + name));
  }
  return updates;
}

std::vector<Tensor> Optimizer::apply_accumulated(const std::vector<GradAndVar>& grads) const {
  Graph& g = *graph_;
  const Tensor counter = slot(g, "AccumGrad/counter", f32({}), 0.0f);
  const Tensor runs = counter + 1.0f;
  // 1 on the run that applies, else 0; exact, as the counter counts in small integers.
  const Tensor apply = graph::where(runs - scalar(g, static_cast<float>(accumulation_steps_)), scalar(g, 0.0f),
                                    scalar(g, 1.0f));
  const Tensor guard = concat({reshape(scalar(g, 1.0f) - apply, {1}), reshape(scalar(g, 1.0f), {1})}, 0);
  std::vector<GradAndVar> sums;
  std::vector<Tensor> updates;
  for (const auto& [grad, var] : grads) {
    if (!grad.valid()) continue;
    const std::string name = std::get<VariableAttrs>(var.node().attrs).var_name;
    const Tensor acc = slot(g, name + "/AccumGrad", var.type(), 0.0f);
    const Tensor sum = acc + grad;
    sums.emplace_back(sum, var);
    updates.push_back(assign(acc, graph::where(apply, scalar(g, 0.0f), sum)));
  }
  Optimizer base = without_processors();  // applied already
  base.accumulation_steps_ = 1;
  for (const Tensor& t : base.apply_gradients(sums, guard)) updates.push_back(t);
  updates.push_back(assign(counter, graph::where(apply, scalar(g, 0.0f), runs)));
  return updates;
}

Optimizer Optimizer::without_processors() const {
  Optimizer o = *this;
  o.processors_.clear();
  return o;
}

Optimizer apply_grad_processors(Optimizer base, std::vector<GradProcPtr> processors) {
  for (GradProcPtr& p : processors) {
    if (p == nullptr) throw Error(ErrorCode::invalid_argument, "apply_grad_processors: a processor is null");
    base.processors_.push_back(std::move(p));
  }
  return base;
}

std::vector<Tensor> Optimizer::minimize(Tensor cost, const std::vector<GradProcPtr>& processors) const {
  const std::vector<Tensor> vars = graph_->trainable_variables();
  if (vars.empty()) throw Error(ErrorCode::invalid_argument, "minimize: the graph has no trainable variables");
  std::vector<Tensor> train = minimize(cost, vars, processors);
  for (const Tensor& t : graph_->collection(kUpdateOps)) train.push_back(t);
  return train;
}

std::vector<Tensor> Optimizer::minimize(Tensor cost, const std::vector<Tensor>& vars,
                                        const std::vector<GradProcPtr>& processors) const {
  if (vars.empty()) throw Error(ErrorCode::invalid_argument, "minimize: no variables to train for '" + cost.name() + "'");
  const std::vector<Tensor> grads = gradients(cost, vars);
  std::vector<GradAndVar> pairs;
  for (std::size_t i = 0; i < vars.size(); ++i) pairs.emplace_back(grads[i], vars[i]);
  pairs = filter_none(std::move(pairs));
  if (pairs.empty())
    throw Error(ErrorCode::invalid_argument, "minimize: cost '" + cost.name() + "' depends on no trainable variable");
  return apply_gradients(process_gradients(processors, std::move(pairs)));
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

// The attributes of `kind` with each hyperparameter the table lists registered under its
// name, its value checked against its range: [low, high), or [low, high] with `closed`.
struct Hyperparameter {
  HyperparameterRole role;
  float value, low, high;
  bool closed = false;
};

OptimizerAttrs attrs_of(Graph& graph, OptimizerKind kind, std::initializer_list<Hyperparameter> values) {
  const OptimizerSpec& spec = optimizer_spec(kind);
  OptimizerAttrs a;
  a.kind = kind;
  std::uint32_t* words[] = {&a.learning_rate, &a.momentum, &a.beta2, &a.epsilon, &a.weight_decay};
  for (const Hyperparameter& h : values) {
    const std::string name(spec.hyperparameters[static_cast<std::size_t>(h.role)]);
    VKP_CHECK(!name.empty(), std::string(spec.name) + " has no hyperparameter of this role");
    in_range(std::string(spec.name).c_str(), name.c_str(), h.value, h.low, h.high, h.closed);
    *words[static_cast<std::size_t>(h.role)] = graph.hyperparameter(name, h.value);
  }
  if (kind == OptimizerKind::adam || kind == OptimizerKind::adamw) a.step_factor = Graph::kAdamStepWord;
  return a;
}

using Role = HyperparameterRole;

}  // namespace

Optimizer sgd(Graph& graph, float learning_rate) {
  return Optimizer(graph, attrs_of(graph, OptimizerKind::sgd, {{Role::learning_rate, learning_rate, 0.0f, kNoLimit}}));
}

Optimizer momentum(Graph& graph, float learning_rate, float mu, bool nesterov) {
  return Optimizer(graph, attrs_of(graph, nesterov ? OptimizerKind::nesterov : OptimizerKind::momentum,
                                   {{Role::learning_rate, learning_rate, 0.0f, kNoLimit},
                                    {Role::momentum, mu, 0.0f, 1.0f, /*closed=*/true}}));
}

Optimizer adam(Graph& graph, float learning_rate, float beta1, float beta2, float epsilon) {
  return Optimizer(graph, attrs_of(graph, OptimizerKind::adam,
                                   {{Role::learning_rate, learning_rate, 0.0f, kNoLimit},
                                    {Role::momentum, beta1, 0.0f, 1.0f},
                                    {Role::beta2, beta2, 0.0f, 1.0f},
                                    {Role::epsilon, epsilon, 0.0f, kNoLimit}}));
}

Optimizer adamw(Graph& graph, float learning_rate, float weight_decay, float beta1, float beta2, float epsilon) {
  return Optimizer(graph, attrs_of(graph, OptimizerKind::adamw,
                                   {{Role::learning_rate, learning_rate, 0.0f, kNoLimit},
                                    {Role::momentum, beta1, 0.0f, 1.0f},
                                    {Role::beta2, beta2, 0.0f, 1.0f},
                                    {Role::epsilon, epsilon, 0.0f, kNoLimit},
                                    {Role::weight_decay, weight_decay, 0.0f, kNoLimit}}));
}

Optimizer rmsprop(Graph& graph, float learning_rate, float decay, float momentum, float epsilon) {
  return Optimizer(graph,
                   attrs_of(graph, OptimizerKind::rmsprop,
                            {{Role::learning_rate, learning_rate, 0.0f, kNoLimit},
                             {Role::momentum, momentum, 0.0f, 1.0f, /*closed=*/true},
                             {Role::beta2, decay, 0.0f, 1.0f, /*closed=*/true},
                             {Role::epsilon, epsilon, 0.0f, kNoLimit}}),
                   {1.0f, 0.0f});
}

Optimizer adagrad(Graph& graph, float learning_rate, float initial_accumulator_value) {
  in_range("adagrad", "initial_accumulator_value", initial_accumulator_value, 0.0f, kNoLimit);
  if (initial_accumulator_value <= 0.0f)
    throw Error(ErrorCode::invalid_argument, "adagrad: initial_accumulator_value must be positive, got " +
                                                 std::to_string(initial_accumulator_value));
  return Optimizer(graph, attrs_of(graph, OptimizerKind::adagrad, {{Role::learning_rate, learning_rate, 0.0f, kNoLimit}}),
                   {initial_accumulator_value, 0.0f});
}

Optimizer accumulate_gradients(Optimizer base, int steps) {
  if (steps < 1)
    throw Error(ErrorCode::invalid_argument, "accumulate_gradients: steps must be >= 1, got " + std::to_string(steps));
  base.accumulation_steps_ = steps;
  return base;
}

float adam_step_factor(float learning_rate, float beta1, float beta2, std::uint64_t t) {
  const double steps = static_cast<double>(t);
  return static_cast<float>(double{learning_rate} * std::sqrt(1.0 - std::pow(double{beta2}, steps)) /
                            (1.0 - std::pow(double{beta1}, steps)));
}

}  // namespace vkp::graph
