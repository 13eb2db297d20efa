#include "bench_models.h"

#include "engine/graph/layers.h"
#include "engine/graph/ops.h"

namespace vkp::bench {

using namespace graph;

namespace {
Tensor relu_of(Tensor t) { return relu(t); }
}  // namespace

BenchModel mlp_model(Graph& g, std::int64_t batch) {
  const Tensor x = placeholder(g, "x", f32({batch, 784}));
  const Tensor labels = placeholder(g, "labels", i32({batch}));
  Tensor h = FullyConnected("fc0", x, 256, {.activation = relu_of});
  h = FullyConnected("fc1", h, 256, {.activation = relu_of});
  return {x, labels, reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc2", h, 10), labels))};
}

BenchModel convnet_model(Graph& g, std::int64_t batch) {
  const Tensor x = placeholder(g, "x", f32({batch, 28, 28, 1}));
  const Tensor labels = placeholder(g, "labels", i32({batch}));
  Tensor t = BNReLU("bn0", Conv2D("conv0", x, 32, {3, 3}, {.use_bias = false}));
  t = MaxPooling("pool0", t, {2, 2});
  t = BNReLU("bn1", Conv2D("conv1", t, 64, {3, 3}, {.use_bias = false}));
  t = MaxPooling("pool1", t, {2, 2});
  t = FullyConnected("fc0", t, 128, {.activation = relu_of});
  return {x, labels, reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc1", t, 10), labels))};
}

}  // namespace vkp::bench
