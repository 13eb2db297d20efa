// Variables and the scopes that name them, with TensorFlow's rules:
//   get_variable("W", ...) inside VariableScope("conv0") is "conv0/W";
//   an existing name is an error unless the scope reuses, and reuse of a name that does
//   not exist is an error too (Reuse::automatic allows both);
//   TowerContext prefixes op names ("tower1/...") but never variable names, so every
//   tower shares one set of variables.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/initializer.h"

namespace vkp::graph {

// Creates, or returns under reuse, the variable <scope>/<name>. Inside FreezeVariables a
// new variable is not trainable whatever `trainable` says, and a trainable one reused
// there is returned through stop_gradient.
Tensor get_variable(Graph& graph, const std::string& name, std::vector<std::int64_t> dims, Initializer init,
                    bool trainable = true);

// Names both variables and ops inside it.
class VariableScope {
 public:
  VariableScope(Graph& graph, std::string name, Reuse reuse = Reuse::inherit);
  ~VariableScope() { graph_.context().pop_scope(); }
  VariableScope(const VariableScope&) = delete;
  VariableScope& operator=(const VariableScope&) = delete;

 private:
  Graph& graph_;
};

// Names ops only.
class NameScope {
 public:
  NameScope(Graph& graph, std::string name);
  ~NameScope() { graph_.context().pop_scope(); }
  NameScope(const NameScope&) = delete;
  NameScope& operator=(const NameScope&) = delete;

 private:
  Graph& graph_;
};

// tensorpack's freeze_variables, for fine-tuning: variables made inside are not trainable
// (no gradient, no optimizer slots, untouched by the optimizer; checkpoints still hold
// them), trainable ones reused inside are read through stop_gradient, and a BatchNorm
// inside normalises with its moving statistics even in a training tower and leaves them
// as they are. Layers take `trainable = false` to freeze themselves the same way.
class FreezeVariables {
 public:
  explicit FreezeVariables(Graph& graph) : graph_(graph) {
    graph.context().set_frozen(graph.context().frozen_depth() + 1);
  }
  ~FreezeVariables() { graph_.context().set_frozen(graph_.context().frozen_depth() - 1); }
  FreezeVariables(const FreezeVariables&) = delete;
  FreezeVariables& operator=(const FreezeVariables&) = delete;

 private:
  Graph& graph_;
};

// What layers read while a tower function builds: the tower's name and index, and
// whether it trains (BatchNorm uses batch statistics and updates its averages, Dropout
// drops) or infers. Ops inside are named "<tower name>/...".
class TowerContext {
 public:
  TowerContext(Graph& graph, std::string name, int index, bool is_training);
  ~TowerContext();
  TowerContext(const TowerContext&) = delete;
  TowerContext& operator=(const TowerContext&) = delete;

 private:
  Graph& graph_;
  TowerInfo saved_;
};

}  // namespace vkp::graph
