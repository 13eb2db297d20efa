#include "train/predictor.h"

#include <filesystem>
#include <map>

#include "callbacks/checkpoint.h"
#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "train/session_init.h"

namespace vkp::train {

std::vector<std::vector<Array>> PredictorBase::predict(std::span<const std::vector<Array>> many) {
  std::vector<std::vector<Array>> out;
  out.reserve(many.size());
  for (const std::vector<Array>& inputs : many) out.push_back((*this)(inputs));
  return out;
}

OfflinePredictor::OfflinePredictor(std::shared_ptr<ModelDesc> model, const std::string& checkpoint,
                                   vk::Device& device, const std::vector<std::string>& input_names,
                                   const std::vector<std::string>& output_names)
    : OfflinePredictor(PredictConfig{std::move(model), checkpoint, input_names, output_names}, device) {}

OfflinePredictor::OfflinePredictor(const PredictConfig& config, vk::Device& device) : config_(config) {
  if (!config.model) throw Error(ErrorCode::invalid_argument, "OfflinePredictor: the config has no model");
  ModelDesc* model = config.model.get();
  const std::string& checkpoint = config.checkpoint;
  const std::vector<std::string>& input_names = config.input_names;
  const std::vector<std::string>& output_names = config.output_names;
  std::map<std::string, graph::Tensor> placeholders;
  std::vector<graph::Tensor> all;
  {
    graph::TowerContext inference(graph_, "", 0, false);
    for (const InputSpec& s : model->inputs()) {
      all.push_back(graph::placeholder(graph_, s.name, s.type));
      placeholders[s.name] = all.back();
    }
    model->build_graph(all);
  }
  for (const std::string& name : input_names) {
    const auto it = placeholders.find(name);
    if (it == placeholders.end()) throw Error(ErrorCode::not_found, "OfflinePredictor: the model has no input " + name);
    inputs_.push_back(it->second);
  }
  for (const std::string& name : output_names) outputs_.push_back(graph_.find(name));
  session_ = std::make_unique<graph::Session>(graph_, device);

  // The checkpoint also holds what only training uses (optimizer slots); take what the
  // inference tower has, and require all of it.
  std::string file = checkpoint;
  if (std::filesystem::is_directory(checkpoint)) {
    file = callbacks::latest_checkpoint(checkpoint);
    if (file.empty()) throw Error(ErrorCode::not_found, "no checkpoint in " + checkpoint);
  }
  const callbacks::Checkpoint saved = callbacks::load_checkpoint(file);
  std::map<std::string, Array> values;
  for (const graph::Tensor& v : graph_.variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    const auto it = saved.variables.find(name);
    if (it == saved.variables.end())
      throw Error(ErrorCode::not_found, "OfflinePredictor: " + file + " has no variable " + name);
    values.emplace(name, it->second);
  }
  restore_variables(*session_, values, /*ignore_mismatch=*/false, file);
}

void OfflinePredictor::check_arity(const std::vector<Array>& inputs) const {
  if (inputs.size() != inputs_.size())
    throw Error(ErrorCode::invalid_argument, "OfflinePredictor takes " + std::to_string(inputs_.size()) +
                                                 " inputs, got " + std::to_string(inputs.size()));
}

std::vector<Array> OfflinePredictor::operator()(const std::vector<Array>& inputs) {
  check_arity(inputs);
  graph::Feeds feeds;
  for (std::size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(inputs_[i], inputs[i]);
  const std::lock_guard lock(mutex_);
  return session_->run(feeds, outputs_);
}

std::vector<std::vector<Array>> OfflinePredictor::predict(std::span<const std::vector<Array>> many) {
  for (const std::vector<Array>& inputs : many) check_arity(inputs);
  const auto same_shapes = [](const std::vector<Array>& a, const std::vector<Array>& b) {
    for (std::size_t i = 0; i < a.size(); ++i)
      if (a[i].shape() != b[i].shape() || a[i].dtype() != b[i].dtype()) return false;
    return true;
  };
  std::vector<std::vector<Array>> out(many.size());
  const std::lock_guard lock(mutex_);
  for (std::size_t first = 0; first < many.size();) {
    std::size_t end = first + 1;
    while (end < many.size() && same_shapes(many[end], many[first])) ++end;
    std::vector<graph::FeedSpec> specs;
    for (std::size_t i = 0; i < inputs_.size(); ++i)
      specs.push_back({inputs_[i], graph::TensorType{many[first][i].dtype(), many[first][i].shape().dims()}});
    // Batch k runs from variant k % 2; batch k + 1 is written into the other meanwhile.
    graph::Program& p = session_->program(specs, outputs_, {}, end - first > 1 ? 2 : 1);
    p.write_feeds(many[first], 0);
    session_->submit_program(p, 0);
    for (std::size_t k = first; k < end; ++k) {
      const int next = static_cast<int>((k + 1 - first) % 2);
      if (k + 1 < end) p.write_feeds(many[k + 1], next);
      session_->wait_program(p, out[k]);
      if (k + 1 < end) session_->submit_program(p, next);
    }
    first = end;
  }
  return out;
}

}  // namespace vkp::train
