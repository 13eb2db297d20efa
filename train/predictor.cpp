#include "train/predictor.h"

#include <filesystem>
#include <map>

#include "callbacks/checkpoint.h"
#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "train/session_init.h"

namespace vkp::train {

OfflinePredictor::OfflinePredictor(std::shared_ptr<ModelDesc> model, const std::string& checkpoint,
                                   vk::Device& device, const std::vector<std::string>& input_names,
                                   const std::vector<std::string>& output_names) {
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

std::vector<Array> OfflinePredictor::operator()(const std::vector<Array>& inputs) {
  if (inputs.size() != inputs_.size())
    throw Error(ErrorCode::invalid_argument, "OfflinePredictor takes " + std::to_string(inputs_.size()) +
                                                 " inputs, got " + std::to_string(inputs.size()));
  graph::Feeds feeds;
  for (std::size_t i = 0; i < inputs.size(); ++i) feeds.emplace_back(inputs_[i], inputs[i]);
  return session_->run(feeds, outputs_);
}

}  // namespace vkp::train
