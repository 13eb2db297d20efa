#include "test_models.h"

#include "core/rng.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"

namespace vkp::test {

using namespace graph;

Model mlp(Graph& g, std::int64_t batch) {
  Model m;
  m.x = placeholder(g, "x", f32({batch, 16}));
  m.labels = placeholder(g, "labels", i32({batch}));
  const Tensor hidden = FullyConnected("fc0", m.x, 32, {.activation = [](Tensor t) { return relu(t); }});
  m.logits = FullyConnected("fc1", hidden, 4);
  m.loss = reduce_mean(sparse_softmax_cross_entropy(m.logits, m.labels));
  return m;
}

Model convnet(Graph& g, std::int64_t batch) {
  Model m;
  m.x = placeholder(g, "x", f32({batch, 8, 8, 1}));
  m.labels = placeholder(g, "labels", i32({batch}));
  Tensor t = Conv2D("conv0", m.x, 8, {3, 3}, {.use_bias = false});
  t = relu(BatchNorm("bn0", t));
  t = MaxPooling("pool0", t, {2, 2});
  m.logits = FullyConnected("fc0", t, 4);
  m.loss = reduce_mean(sparse_softmax_cross_entropy(m.logits, m.labels));
  return m;
}

std::pair<Array, Array> mlp_batch(std::int64_t batch, std::uint64_t step) {
  Rng centres(42);
  std::vector<float> centre(4 * 16);
  for (float& c : centre) c = centres.uniform() < 0.5f ? -1.0f : 1.0f;
  Rng rng(1000 + step);
  Array x(DType::f32, Shape{batch, 16}), labels(DType::i32, Shape{batch});
  for (std::int64_t i = 0; i < batch; ++i) {
    const auto k = static_cast<std::int32_t>(rng.below(4));
    labels.data<std::int32_t>()[static_cast<std::size_t>(i)] = k;
    for (int d = 0; d < 16; ++d)
      x.data<float>()[static_cast<std::size_t>(i * 16 + d)] = centre[static_cast<std::size_t>(k * 16 + d)] + 0.6f * rng.normal();
  }
  return {std::move(x), std::move(labels)};
}

std::pair<Array, Array> image_batch(std::int64_t batch, std::uint64_t step) {
  Rng rng(5000 + step);
  Array x(DType::f32, Shape{batch, 8, 8, 1}), labels(DType::i32, Shape{batch});
  for (std::int64_t i = 0; i < batch; ++i) {
    const auto k = static_cast<std::int32_t>(rng.below(4));
    labels.data<std::int32_t>()[static_cast<std::size_t>(i)] = k;
    for (int y = 0; y < 8; ++y)
      for (int xx = 0; xx < 8; ++xx) {
        const bool bar = (k == 0 && y < 2) || (k == 1 && y >= 6) || (k == 2 && xx < 2) || (k == 3 && xx >= 6);
        x.data<float>()[static_cast<std::size_t>((i * 8 + y) * 8 + xx)] = (bar ? 1.0f : 0.0f) + 0.3f * rng.normal();
      }
  }
  return {std::move(x), std::move(labels)};
}

}  // namespace vkp::test
