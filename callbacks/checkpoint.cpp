#include "callbacks/checkpoint.h"

#include <utility>

namespace vkp::callbacks {

CheckpointInfo session_info(graph::Session& session, int epoch) {
  CheckpointInfo info;
  info.global_step = static_cast<std::int64_t>(session.global_step());
  info.epoch = epoch;
  for (const auto& [name, initial] : session.graph().hyperparameters()) info.hyperparameters[name] = session.hyperparameter(name);
  return info;
}

std::vector<std::string> variable_names(const graph::Graph& graph) {
  std::vector<std::string> names;
  for (const graph::Tensor& v : graph.variables()) names.push_back(std::get<graph::VariableAttrs>(v.node().attrs).var_name);
  return names;
}

std::string save_checkpoint(graph::Session& session, const std::string& dir, const CheckpointInfo& info,
                            int max_to_keep, bool allow_non_finite) {
  std::vector<std::string> names = variable_names(session.graph());
  std::vector<Array> values = session.variable_values(names);
  return save_checkpoint(std::move(names), std::move(values), dir, info, max_to_keep, allow_non_finite);
}

}  // namespace vkp::callbacks
