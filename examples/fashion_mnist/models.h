// The Fashion-MNIST example's models and data, shared by the example program and its
// test: an MLP, and a convnet of conv-BatchNorm-relu-pool blocks followed by fully
// connected layers, both classifying 28x28x1 images into 10 classes.
#pragma once

#include <memory>
#include <string>

#include "vkpack/vkpack.h"

namespace vkp::examples {

enum class Architecture { mlp, convnet };
Architecture parse_architecture(const std::string& name);  // "mlp", "conv"/"convnet"

// Inputs "input" f32 [?, 28, 28, 1] and "label" i32 [?]. The tower names "cost" (mean
// cross entropy + L2 on the weights), "accuracy" and "incorrect_vector" (1 per wrong
// example) for the InferenceRunner, and adds cost and accuracy to the moving summaries.
// `freeze_convolutions` (fine-tuning): the convnet's convolutions and their batch norms
// are built with trainable = false, so only the fully connected layers train.
class FashionMnistModel : public train::ModelDesc {
 public:
  FashionMnistModel(Architecture architecture, float learning_rate, bool freeze_convolutions = false);
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 private:
  Architecture architecture_;
  float learning_rate_;
  bool freeze_convolutions_;
};

// Batches of the train split (shuffled from `seed`, last partial batch dropped) or the
// test split (in order, every datapoint), images as f32 in [0, 1].
dataflow::DataFlowPtr fashion_mnist_batches(bool train, std::int64_t batch, std::uint64_t seed,
                                            const std::string& dir = {});

}  // namespace vkp::examples
