#include "engine/graph/optimizer_table.h"

#include "core/error.h"

namespace vkp::graph {

const OptimizerSpec& optimizer_spec(OptimizerKind kind) {
  // In OptimizerKind's order (checked below).
  static const std::array<OptimizerSpec, 7> table = {{
      {OptimizerKind::sgd, "sgd", {"learning_rate", "", "", "", ""}, {"", ""}, 0},
      {OptimizerKind::momentum, "momentum", {"learning_rate", "momentum", "", "", ""}, {"Momentum", ""}, 1},
      {OptimizerKind::nesterov, "nesterov momentum", {"learning_rate", "momentum", "", "", ""}, {"Momentum", ""}, 1},
      {OptimizerKind::adam, "adam", {"learning_rate", "beta1", "beta2", "epsilon", ""}, {"Adam", "Adam_1"}, 2},
      {OptimizerKind::adamw, "adamw", {"learning_rate", "beta1", "beta2", "epsilon", "weight_decay"}, {"Adam", "Adam_1"}, 2},
      // TensorFlow 1 names the slots of RMSProp's rms and momentum <var>/RMSProp and
      // <var>/RMSProp_1; rho is its "decay".
      {OptimizerKind::rmsprop, "rmsprop", {"learning_rate", "momentum", "decay", "epsilon", ""}, {"RMSProp", "RMSProp_1"}, 2},
      {OptimizerKind::adagrad, "adagrad", {"learning_rate", "", "", "", ""}, {"Adagrad", ""}, 1},
  }};
  const auto index = static_cast<std::size_t>(kind);
  VKP_CHECK(index < table.size() && table[index].kind == kind, "the optimizer table is out of OptimizerKind's order");
  return table[index];
}

std::vector<std::string> optimizer_slot_names(OptimizerKind kind, const std::string& var) {
  const OptimizerSpec& spec = optimizer_spec(kind);
  std::vector<std::string> names;
  for (std::size_t i = 0; i < spec.slot_count; ++i) names.push_back(var + "/" + std::string(spec.slots[i]));
  return names;
}

}  // namespace vkp::graph
