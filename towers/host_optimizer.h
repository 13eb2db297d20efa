// The parameter server's update on the host: shaders/optimizer.comp's formulas for every
// graph::OptimizerKind, in float32 and the shader's operation order, so that a master
// copy kept on the host (TowerOptions::master) follows the one a device would keep.
// Elements are independent: OpenMP splits them above ~1M, each thread's loop is
// vectorised.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "engine/graph/attrs.h"

namespace vkp::graph {
class Session;
}

namespace vkp::towers {

// One step's hyperparameters, as the shader reads them from the scalar buffer.
struct HostOptimizerStep {
  graph::OptimizerKind kind = graph::OptimizerKind::sgd;
  float learning_rate = 0;
  float momentum = 0;  // momentum, nesterov; beta1 for adam
  float beta2 = 0;
  float epsilon = 0;
  float weight_decay = 0;
  std::uint64_t global_step = 0;  // Adam corrects its bias with t = global_step + 1
};

// The hyperparameters `kind` uses, read from `session` by the names of the optimizer
// table (graph/optimizer_table.h: "learning_rate", "momentum", "beta1", ...). Slot names:
// graph::optimizer_slot_names.
HostOptimizerStep read_host_optimizer_step(graph::Session& session, graph::OptimizerKind kind,
                                           std::uint64_t global_step);
// The same from a lookup by name (async towers keep a table while their threads run).
HostOptimizerStep read_host_optimizer_step(graph::OptimizerKind kind, std::uint64_t global_step,
                                           const std::function<float(const std::string&)>& lookup);

// Updates n elements of variable v and its slots m, s in place from gradient g. m and s
// may be null where `kind` keeps no such slot.
void apply_host_optimizer(const HostOptimizerStep& step, float* v, const float* g, float* m, float* s, std::size_t n);

}  // namespace vkp::towers
