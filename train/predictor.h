// OfflinePredictor: a model's inference tower (BatchNorm moving averages, no dropout) on a
// device, with its variables from a checkpoint: a callable from input arrays to output
// arrays, fed and fetched by the names the tower function gave them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/graph/session.h"
#include "train/model_desc.h"

namespace vkp::vk {
class Device;
}

namespace vkp::train {

class OfflinePredictor {
 public:
  // `checkpoint`: a checkpoint file or a log directory (its latest). The checkpoint must
  // hold every variable of the inference tower.
  OfflinePredictor(std::shared_ptr<ModelDesc> model, const std::string& checkpoint, vk::Device& device,
                   const std::vector<std::string>& input_names, const std::vector<std::string>& output_names);

  std::vector<Array> operator()(const std::vector<Array>& inputs);

  // What export_onnx writes: the inference tower's session and its fed and fetched tensors.
  graph::Session& session() { return *session_; }
  const std::vector<graph::Tensor>& inputs() const { return inputs_; }
  const std::vector<graph::Tensor>& outputs() const { return outputs_; }

 private:
  graph::Graph graph_;
  std::unique_ptr<graph::Session> session_;
  std::vector<graph::Tensor> inputs_, outputs_;
};

}  // namespace vkp::train
