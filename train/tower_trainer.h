// TowerTrainer: a trainer built from a tower function (ModelDesc::build_graph): the
// training tower and the optimizer make the step, and an inference tower on the same
// variables serves predictors. SimpleTrainer trains one tower on one device; the
// multi-device trainers derive from TowerTrainer too, so that changing trainers is a
// one-line change in user code.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "engine/graph/loss_scale.h"
#include "engine/graph/optimizer.h"
#include "train/model_desc.h"
#include "train/trainer.h"

namespace vkp::train {

using TowerFn = std::function<graph::Tensor(const std::vector<graph::Tensor>& inputs)>;
using OptimizerFn = std::function<graph::Optimizer(graph::Graph&)>;

class TowerTrainer : public Trainer {
 public:
  using Trainer::Trainer;

  // Placeholders for `inputs`, the tower function on them under a training
  // TowerContext, the optimizer's minimize of its cost: the step.
  virtual void setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                           OptimizerFn optimizer);

  // Mixed precision, before setup_graph: the step keeps activations and gradients as
  // float16 (CompileOptions::f16_storage; float32 master weights and optimizer state)
  // and trains with dynamic loss scaling (graph/loss_scale.h), whose scale and skipped
  // steps the trainer reports as the statistics "loss_scale" and "skipped_steps"
  // (GAN trainers: one scale for each net, train/gan.h). Every trainer supports it; on
  // several towers, not with gradient processors (Error(unsupported) at setup_graph).
  virtual void enable_mixed_precision(const graph::LossScaleOptions& options = {});
  bool mixed_precision() const { return loss_scale_.has_value(); }

  // Feeds inputs and fetches outputs of the inference tower ("InferenceTower/<name>"),
  // built once on first use, which shares every variable with training.
  callbacks::PredictFn predictor(const std::vector<std::string>& input_names,
                                 const std::vector<std::string>& output_names) override;

 protected:
  // The same in any graph built by tower_ (a tower of a multi-device trainer), run by
  // `session`.
  callbacks::PredictFn predictor_in(graph::Graph& graph, graph::Session& session,
                                    const std::vector<std::string>& input_names,
                                    const std::vector<std::string>& output_names);

  // With mixed precision, for each loss scale the trainer keeps (loss_scale_names: by
  // default "loss_scale"; a GAN trainer's "d_loss_scale" and "g_loss_scale"): the
  // statistics <name> (its scale) and <p>skipped_steps, where <name> is <p>loss_scale.
  void report_epoch() override;
  virtual std::vector<std::string> loss_scale_names() const { return {"loss_scale"}; }

  std::vector<InputSpec> specs_;
  TowerFn tower_;
  std::optional<graph::LossScaleOptions> loss_scale_;  // with mixed precision

 private:
  // By graph: its inference tower's placeholders by input name, once built.
  std::map<const graph::Graph*, std::map<std::string, graph::Tensor>> inference_inputs_;
};

class SimpleTrainer : public TowerTrainer {
 public:
  using TowerTrainer::TowerTrainer;
};

// The inference tower's name prefix.
inline constexpr const char* kInferenceTower = "InferenceTower";

}  // namespace vkp::train
