// The models the step benchmarks train (graph_bench, towers_bench): placeholders "x" and
// "labels" of a fixed batch and the mean cross entropy of the logits.
#pragma once

#include <cstdint>

#include "engine/graph/graph.h"

namespace vkp::bench {

struct BenchModel {
  graph::Tensor x, labels, loss;
};

// x f32 [batch, 784] -> FC 256 relu -> FC 256 relu -> FC 10.
BenchModel mlp_model(graph::Graph& g, std::int64_t batch);
// x f32 [batch, 28, 28, 1] -> conv3x3x32-BNReLU-pool2 -> conv3x3x64-BNReLU-pool2 ->
// FC 128 relu -> FC 10.
BenchModel convnet_model(graph::Graph& g, std::int64_t batch);

}  // namespace vkp::bench
