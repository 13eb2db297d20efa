// ModelDesc: a model as tensorpack describes one: its inputs, the tower function that
// builds the cost from them, and the optimizer.
#pragma once

#include <string>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/optimizer.h"

namespace vkp::train {

// One input of a model: a placeholder's name and type (the batch extent may be kUnknown).
struct InputSpec {
  std::string name;
  graph::TensorType type;
};

class ModelDesc {
 public:
  virtual ~ModelDesc() = default;
  virtual std::vector<InputSpec> inputs() const = 0;
  // The tower function: builds the model on placeholders made from inputs() (in that
  // order) and returns the cost, a scalar. It runs once per tower (training or
  // inference, see graph::TowerContext); name the tensors a predictor or an
  // InferenceRunner should find with identity(t, "name").
  virtual graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) = 0;
  // The optimizer, built in `graph`; wrap it with graph::apply_grad_processors for
  // gradient processors (a norm clip), which every trainer then applies.
  virtual graph::Optimizer optimizer(graph::Graph& graph) = 0;
};

}  // namespace vkp::train
