#include "train/tower_trainer.h"

#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"

namespace vkp::train {

void TowerTrainer::setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                               OptimizerFn optimizer) {
  specs_ = inputs;
  tower_ = std::move(tower);
  std::vector<graph::Tensor> placeholders;
  for (const InputSpec& s : specs_) placeholders.push_back(graph::placeholder(graph(), s.name, s.type));
  graph::Tensor cost;
  {
    graph::TowerContext training(graph(), "", 0, true);
    cost = tower_(placeholders);
  }
  if (!cost.valid() || cost.type().numel() != 1)
    throw Error(ErrorCode::invalid_argument, "the tower function must return the cost, a scalar; it returned " +
                                                 (cost.valid() ? graph::to_string(cost.type()) : std::string("nothing")));
  if (loss_scale_) {
    const graph::ScaledTrainOp scaled = graph::minimize_with_loss_scaling(optimizer(graph()), cost, *loss_scale_);
    set_step(std::move(placeholders), std::move(source), scaled.train_op, cost);
    return;
  }
  const std::vector<graph::Tensor> train_op = optimizer(graph()).minimize(cost);
  set_step(std::move(placeholders), std::move(source), train_op, cost);
}

void TowerTrainer::report_epoch() {
  if (!loss_scale_) return;
  for (const std::string& name : loss_scale_names()) {
    const std::vector<Array> v = variable_values({name + "/scale", name + "/skipped_steps"});
    const std::string prefix = name.substr(0, name.size() - std::string("loss_scale").size());  // "d_", ""
    monitors().put_scalar(name, v[0].data<float>()[0]);
    monitors().put_scalar(prefix + "skipped_steps", v[1].data<float>()[0]);
  }
}

void TowerTrainer::enable_mixed_precision(const graph::LossScaleOptions& options) {
  if (tower_) throw Error(ErrorCode::invalid_argument, "enable_mixed_precision: call it before setup_graph");
  loss_scale_ = options;
  auto* one = dynamic_cast<SessionState*>(&state());
  if (!one)
    throw Error(ErrorCode::invalid_argument,
                "enable_mixed_precision: this trainer's model is not one session on one device");
  one->options().f16_storage = true;
}

callbacks::PredictFn TowerTrainer::predictor(const std::vector<std::string>& input_names,
                                             const std::vector<std::string>& output_names) {
  return predictor_in(graph(), session(), input_names, output_names);
}

callbacks::PredictFn TowerTrainer::predictor_in(graph::Graph& g, graph::Session& session,
                                                const std::vector<std::string>& input_names,
                                                const std::vector<std::string>& output_names) {
  if (!tower_) throw Error(ErrorCode::invalid_argument, "predictor: setup_graph has not run");
  std::map<std::string, graph::Tensor>& inputs = inference_inputs_[&g];
  if (inputs.empty()) {
    graph::TowerContext inference(g, kInferenceTower, 0, false);
    graph::VariableScope reuse(g, "", graph::Reuse::yes);
    std::vector<graph::Tensor> placeholders;
    for (const InputSpec& s : specs_) {
      placeholders.push_back(graph::placeholder(g, s.name, s.type));
      inputs[s.name] = placeholders.back();
    }
    tower_(placeholders);
  }
  std::vector<graph::Tensor> in, out;
  for (const std::string& name : input_names) {
    const auto it = inputs.find(name);
    if (it == inputs.end()) throw Error(ErrorCode::not_found, "predictor: the model has no input " + name);
    in.push_back(it->second);
  }
  for (const std::string& name : output_names) {
    try {
      out.push_back(g.find(std::string(kInferenceTower) + "/" + name));
    } catch (const Error&) {
      throw Error(ErrorCode::not_found, "predictor: the tower function made no tensor named '" + name +
                                            "'; name it with identity(t, \"" + name + "\")");
    }
  }
  graph::Session* run = &session;
  return [run, in, out](const std::vector<Array>& values) {
    if (values.size() != in.size())
      throw Error(ErrorCode::invalid_argument, "predictor takes " + std::to_string(in.size()) + " inputs, got " +
                                                   std::to_string(values.size()));
    graph::Feeds feeds;
    for (std::size_t i = 0; i < in.size(); ++i) feeds.emplace_back(in[i], values[i]);
    return run->run(feeds, out);
  };
}

}  // namespace vkp::train
