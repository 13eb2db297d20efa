// The conditional DCGAN of examples/gan (tensorpack's ConditionalGAN-mnist, on
// Fashion-MNIST): a generator from noise and a class to a 28 x 28 image, a discriminator
// of an image and its class; and the data that feeds them.
#pragma once

#include <cstdint>
#include <string>

#include "vkpack/vkpack.h"

namespace vkp::examples {

inline constexpr std::int64_t kNoise = 100, kClasses = 10;

// Inputs (batch fixed: the class map is broadcast over the image): "image" f32
// [B, 28, 28, 1] in [0, 1], "onehot" f32 [B, 10], "z" f32 [B, 100] uniform in [-1, 1].
// The generator's image is "gen/image" (sigmoid, [0, 1]).
class ConditionalGan : public train::GANModelDesc {
 public:
  ConditionalGan(std::int64_t batch, float learning_rate) : batch_(batch), lr_(learning_rate) {}
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 private:
  graph::Tensor generator(graph::Tensor z, graph::Tensor onehot);
  graph::Tensor discriminator(graph::Tensor image, graph::Tensor onehot);
  std::int64_t batch_;
  float lr_;
};

// Fashion-MNIST's train split as batches {image, onehot, z}: shuffled from `seed`, z
// drawn from Rng(seed, batch number), so a resumed run replays the same noise.
dataflow::DataFlowPtr gan_batches(std::int64_t batch, std::uint64_t seed, const std::string& dir = {});

// `count` rows: class c (0 .. 9) in rows c, c + 10, ...; z from Rng(seed).
std::vector<Array> noise_and_classes(std::int64_t count, std::uint64_t seed);

}  // namespace vkp::examples
