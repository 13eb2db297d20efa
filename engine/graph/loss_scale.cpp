#include "engine/graph/loss_scale.h"

#include <fmt/format.h>

#include "core/error.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/initializer.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"

namespace vkp::graph {

LossScaleState loss_scale_state(Graph& g, const LossScaleOptions& o, const std::string& name) {
  if (!(o.initial_scale >= 1.0f && o.initial_scale <= o.max_scale) || o.growth_interval < 1)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("loss scaling: initial scale {} must lie in [1, max scale {}] and the growth interval {} "
                            "must be at least 1",
                            o.initial_scale, o.max_scale, o.growth_interval));
  // At the root scope, whatever scope the caller is in.
  VariableScope root(g, "", Reuse::automatic);
  return {get_variable(g, name + "/scale", {}, constant(o.initial_scale), false),
          get_variable(g, name + "/good_steps", {}, zeros(), false),
          get_variable(g, name + "/skipped_steps", {}, zeros(), false)};
}

ScaledTrainOp apply_with_loss_scaling(const Optimizer& optimizer, std::vector<GradAndVar> pairs,
                                      const LossScaleState& state, const LossScaleOptions& o) {
  if (pairs.empty()) throw Error(ErrorCode::invalid_argument, "loss scaling: no gradients to apply");
  Graph& g = state.scale.graph();
  const Tensor &scale = state.scale, &good = state.good_steps, &skipped = state.skipped_steps;
  Tensor nonfinite;
  for (const GradAndVar& gv : pairs) {
    const Tensor count = count_nonfinite(gv.first);
    nonfinite = nonfinite.valid() ? nonfinite + count : count;
  }
  nonfinite = identity(nonfinite, "loss_scale/nonfinite");
  // Every update: skipped when a gradient overflowed, else with the gradient / scale.
  // Gradient processors (a norm clip) must see the true gradients: then they are
  // divided before, and the update's factor is 1.
  Tensor factor = scalar(g, 1.0f) / scale;
  if (!optimizer.processors().empty()) {
    for (GradAndVar& gv : pairs) gv.first = gv.first * factor;
    factor = scalar(g, 1.0f);
  }
  const Tensor guard = concat({reshape(nonfinite, {1}), reshape(factor, {1})}, 0);
  ScaledTrainOp out;
  out.train_op = optimizer.apply_gradients(pairs, guard);
  out.nonfinite = nonfinite;
  // The scale's rule in exact small-integer and power-of-two float arithmetic:
  //   overflow  scale / 2 (at least 1), good 0, skipped + 1
  //   else      good + 1; when that reaches the interval, scale * 2 (at most max) and good 0
  const Tensor one = scalar(g, 1.0f), zero = scalar(g, 0.0f);
  const Tensor overflow = minimum(nonfinite, one);  // 1 or 0
  const Tensor fine = one - overflow;
  const Tensor counted = (good + 1.0f) * fine;
  const Tensor grow = minimum(maximum(counted + static_cast<float>(1 - o.growth_interval), zero), one);
  const Tensor next_scale = scale * ((grow + 1.0f) * fine) + scale * (overflow * 0.5f);
  out.train_op.push_back(assign(scale, minimum(maximum(next_scale, one), scalar(g, o.max_scale))));
  out.train_op.push_back(assign(good, counted * (one - grow)));
  out.train_op.push_back(assign(skipped, skipped + overflow));
  return out;
}

ScaledTrainOp minimize_with_loss_scaling(const Optimizer& optimizer, Tensor cost, const std::vector<Tensor>& vars,
                                         const LossScaleState& state, const LossScaleOptions& o) {
  if (vars.empty()) throw Error(ErrorCode::invalid_argument, "minimize: no trainable variables to train");
  // The gradients of scale * cost: the backward pass starts from dcost = scale, a copy
  // (not a view) of the variable, since the step ends by assigning the variable and
  // the scheduler orders that after the variable's direct readers.
  const std::vector<Tensor> grads = gradients(cost, vars, state.scale * 1.0f);
  std::vector<GradAndVar> pairs;
  for (std::size_t i = 0; i < vars.size(); ++i)
    if (grads[i].valid()) pairs.emplace_back(grads[i], vars[i]);
  if (pairs.empty())
    throw Error(ErrorCode::invalid_argument, "minimize: cost '" + cost.name() + "' depends on no trainable variable");
  return apply_with_loss_scaling(optimizer, std::move(pairs), state, o);
}

ScaledTrainOp minimize_with_loss_scaling(const Optimizer& optimizer, Tensor cost, const LossScaleOptions& o) {
  Graph& g = cost.graph();
  const LossScaleState state = loss_scale_state(g, o);
  const std::vector<Tensor> vars = g.trainable_variables();
  if (vars.empty()) throw Error(ErrorCode::invalid_argument, "minimize: the graph has no trainable variables");
  ScaledTrainOp out = minimize_with_loss_scaling(optimizer, cost, vars, state, o);
  for (const Tensor& t : g.collection(kUpdateOps)) out.train_op.push_back(t);
  return out;
}

}  // namespace vkp::graph
