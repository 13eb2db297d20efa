// Dynamic loss scaling, the other half of mixed precision (float16 activations and
// gradients with float32 master weights, CompileOptions::f16_storage): gradients are
// taken of scale * cost, so that the small gradients of activations are normal float16
// numbers rather than subnormals or zeros; every update divides by the scale and is
// skipped when any gradient holds an inf or a NaN (an overflow); and the scale adapts,
// halved after an overflow and doubled after `growth_interval` steps without one, the
// rule of PyTorch's GradScaler and TensorFlow's LossScaleOptimizer.
//
// All of it is graph ops recorded into the training step (no host round trip), and its
// state is three non-trainable variables, so checkpoints keep it and a resumed run goes
// on exactly where it stopped:
//   loss_scale/scale          the current scale
//   loss_scale/good_steps     steps since the last overflow or growth
//   loss_scale/skipped_steps  steps skipped for an overflow, over the whole run
// A skipped step still counts as a step (global step, Adam's t), as in TensorFlow 1.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/optimizer.h"

namespace vkp::graph {

struct LossScaleOptions {
  float initial_scale = 32768.0f;  // 2^15
  int growth_interval = 2000;      // steps without an overflow before the scale doubles
  float max_scale = 16777216.0f;   // 2^24; the scale never falls below 1
};

inline constexpr const char* kLossScaleVariable = "loss_scale/scale";
inline constexpr const char* kGoodStepsVariable = "loss_scale/good_steps";
inline constexpr const char* kSkippedStepsVariable = "loss_scale/skipped_steps";

struct ScaledTrainOp {
  std::vector<Tensor> train_op;  // the guarded updates, the scale's update, the update ops
  Tensor nonfinite;              // the step's count of inf and NaN gradient elements
};

// Optimizer::minimize(cost) with dynamic loss scaling: every trainable variable, then
// the graph's update-ops collection (BatchNorm's moving averages, not skipped).
ScaledTrainOp minimize_with_loss_scaling(const Optimizer& optimizer, Tensor cost, const LossScaleOptions& options = {});

// The same in two halves, for a trainer that takes the gradients in one program and
// applies them in another (several towers: each tower's gradients of scale * cost,
// averaged on the host, are fed to every tower's update, so the skip is decided on the
// averages and every tower's scale moves alike). First the scale's three variables in
// `g` (made at the root scope, or found there; Error(invalid_argument) for bad
// `options`); the backward pass starts from the scale (gradients(cost, vars, scale *
// 1.0f): a copy, so that the step's assign of the variable comes after it). `name`
// prefixes the variables ("loss_scale": kLossScaleVariable and the others); a trainer of
// several costs (a GAN's two nets) keeps one state for each.
struct LossScaleState {
  Tensor scale, good_steps, skipped_steps;
};
LossScaleState loss_scale_state(Graph& g, const LossScaleOptions& options, const std::string& name = "loss_scale");
// The guarded updates of `grads` (gradients of scale * cost, each with its variable) and
// the scale's own update; not the update-ops collection.
ScaledTrainOp apply_with_loss_scaling(const Optimizer& optimizer, std::vector<GradAndVar> grads,
                                      const LossScaleState& state, const LossScaleOptions& options);

// minimize_with_loss_scaling for one of several costs: over `vars` only, with its own
// `state`, and without the update-ops collection.
ScaledTrainOp minimize_with_loss_scaling(const Optimizer& optimizer, Tensor cost, const std::vector<Tensor>& vars,
                                         const LossScaleState& state, const LossScaleOptions& options);

}  // namespace vkp::graph
