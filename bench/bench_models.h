// The models the step benchmarks train (graph_bench, towers_bench, towers_split): the
// Fashion-MNIST example's own (examples/fashion_mnist/models.h), built in the current
// tower: placeholders "input" f32 [batch, 28, 28, 1] and "label" i32 [batch], and the
// example's cost (mean cross entropy of the logits + L2 on the weights).
#pragma once

#include <cstdint>

#include "engine/graph/graph.h"

namespace vkp::bench {

struct BenchModel {
  graph::Tensor x, labels, loss;
};

// FC 256 relu -> FC 256 relu -> FC 10 on the flattened image.
BenchModel mlp_model(graph::Graph& g, std::int64_t batch);
// conv3x3x32-BNReLU-pool2 -> conv3x3x64-BNReLU-pool2 -> FC 128 relu -> dropout 0.3 ->
// FC 10.
BenchModel convnet_model(graph::Graph& g, std::int64_t batch);

}  // namespace vkp::bench
