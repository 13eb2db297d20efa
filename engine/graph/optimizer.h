// Optimizers: fused in-place update kernels, one per variable, whose hyperparameters
// (learning rate, momentum, betas, epsilon, weight decay) live in the session's scalar
// buffer under those names, so callbacks change them between steps. Slot variables are
// named as in TensorFlow: <var>/Momentum, <var>/Adam, <var>/Adam_1. Names, slots and
// defaults come from one table, optimizer_table.h.
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <vector>

#include "engine/graph/autodiff.h"
#include "engine/graph/grad_proc.h"
#include "engine/graph/graph.h"
#include "engine/graph/optimizer_table.h"

namespace vkp::graph {

class Optimizer {
 public:
  // The update ops for these (gradient, variable) pairs, after the optimizer's gradient
  // processors (apply_grad_processors); pairs without a gradient are skipped. Run the
  // returned targets (with the update-ops collection) each step.
  std::vector<Tensor> apply_gradients(const std::vector<GradAndVar>& grads) const;
  // The same, each update guarded (OptimizerAttrs::guarded): `guard` [2] = {count of
  // non-finite gradient elements, factor}; skipped when the count is not 0, else with
  // gradient * factor (loss_scale.h).
  std::vector<Tensor> apply_gradients(const std::vector<GradAndVar>& grads, Tensor guard) const;

  // gradients(cost, trainable variables) -> `processors` in order -> apply_gradients
  // (the optimizer's own processors, the update), plus the graph's update ops (BatchNorm
  // moving averages): the train op.
  std::vector<Tensor> minimize(Tensor cost, const std::vector<GradProcPtr>& processors = {}) const;
  // Only `var_list` (trainable variables) trains, and the update-ops collection is left
  // to the caller (a GAN's two optimizers each train their own net).
  std::vector<Tensor> minimize(Tensor cost, const std::vector<Tensor>& var_list,
                               const std::vector<GradProcPtr>& processors) const;

  // The gradient processors every trainer applies before this optimizer's update
  // (apply_grad_processors), and the same optimizer without them (for trainers that
  // apply their host forms themselves).
  const std::vector<GradProcPtr>& processors() const { return processors_; }
  Optimizer without_processors() const;

  OptimizerKind kind() const { return attrs_.kind; }
  // Steps whose gradients one update sums (accumulate_gradients); 1 normally.
  int accumulation_steps() const { return accumulation_steps_; }

 private:
  friend Optimizer sgd(Graph&, float);
  friend Optimizer momentum(Graph&, float, float, bool);
  friend Optimizer adam(Graph&, float, float, float, float);
  friend Optimizer adamw(Graph&, float, float, float, float, float);
  friend Optimizer rmsprop(Graph&, float, float, float, float);
  friend Optimizer adagrad(Graph&, float, float);
  friend Optimizer accumulate_gradients(Optimizer, int);
  friend Optimizer apply_grad_processors(Optimizer, std::vector<GradProcPtr>);
  // The accumulated update: gradients summed into <var>/AccumGrad slots, applied (and the
  // sums cleared) on every accumulation_steps_-th run, skipped (a guarded update) on the others.
  std::vector<Tensor> apply_accumulated(const std::vector<GradAndVar>& grads) const;
  Optimizer(Graph& graph, OptimizerAttrs attrs, std::array<float, 2> slot_init = {})
      : graph_(&graph), attrs_(attrs), slot_init_(slot_init) {}

  Graph* graph_;
  OptimizerAttrs attrs_;
  std::array<float, 2> slot_init_;  // the slots' initial values
  int accumulation_steps_ = 1;
  std::vector<GradProcPtr> processors_;
};

Optimizer sgd(Graph& graph, float learning_rate);
Optimizer momentum(Graph& graph, float learning_rate, float momentum = kDefaultMomentum, bool nesterov = false);
Optimizer adam(Graph& graph, float learning_rate, float beta1 = kDefaultBeta1, float beta2 = kDefaultBeta2,
               float epsilon = kDefaultEpsilon);
// Adam with decoupled weight decay: each step also subtracts lr * weight_decay * var.
// (PyTorch's AdamW; TensorFlow Addons' subtracts weight_decay * var, unscaled by lr.)
Optimizer adamw(Graph& graph, float learning_rate, float weight_decay, float beta1 = kDefaultBeta1,
                float beta2 = kDefaultBeta2, float epsilon = kDefaultEpsilon);

// Adam's step size at step t (counted from 1): lr sqrt(1 - beta2^t) / (1 - beta1^t),
// TensorFlow's lr_t. Computed in double and rounded once, so the f32 factor every update
// uses is the nearest to the exact one (a shader's f32 pow is a few ulps off at t = 1..5,
// which made the first steps 3e-5 to 6e-5 too large). The session writes it to
// Graph::kAdamStepWord before every run; the host optimizer calls it too.
// TensorFlow 1's RMSPropOptimizer (centered=False): the rms slot starts at 1 (as
// TensorFlow 1's; Keras starts it at 0), rho is "decay". Slots <var>/RMSProp (rms) and
// <var>/RMSProp_1 (momentum).
Optimizer rmsprop(Graph& graph, float learning_rate, float decay = kDefaultRmsDecay, float momentum = 0.0f,
                  float epsilon = kDefaultRmsEpsilon);
// TensorFlow 1's AdagradOptimizer: the accumulator <var>/Adagrad starts at
// initial_accumulator_value (> 0: the first step divides by its root).
Optimizer adagrad(Graph& graph, float learning_rate, float initial_accumulator_value = kDefaultAdagradInitial);

// tensorpack's AccumGradOptimizer: `base` applied once every `steps` runs of the train op
// to the sum of those runs' gradients (about a `steps` times larger batch with a `steps`
// times larger learning rate, in the memory of one batch); the variables do not change
// on the runs between. The run counter (AccumGrad/counter) and the sums
// (<var>/AccumGrad) are non-trainable variables, so checkpoints keep them. Not combined
// with dynamic loss scaling (Error).
Optimizer accumulate_gradients(Optimizer base, int steps);

// tensorpack's optimizer.apply_grad_processors: `base` whose updates apply `processors`
// (grad_proc.h) in order to the gradients first, after any it had; with
// accumulate_gradients, to each run's gradients before they are summed. ModelDesc's
// optimizer() returns it, and every trainer applies them (see grad_proc.h for where).
Optimizer apply_grad_processors(Optimizer base, std::vector<GradProcPtr> processors);

float adam_step_factor(float learning_rate, float beta1, float beta2, std::uint64_t t);

}  // namespace vkp::graph
