// A one-dimensional GAN for the GAN trainers' tests: real samples around 3; the
// generator maps 2-D noise to a number through two layers, the discriminator judges a
// number through two layers; Adam or SGD.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "train_fixtures.h"
#include "core/rng.h"
#include "dataflow/dataflow.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "train/gan.h"

namespace vkp::test {

constexpr std::int64_t kBatch = 16;

class OneDimGan : public train::GANModelDesc {
 public:
  explicit OneDimGan(bool adam, std::int64_t batch = kBatch) : adam_(adam), batch_(batch) {}
  std::vector<train::InputSpec> inputs() const override {
    return {{"real", graph::f32({batch_, 1})}, {"z", graph::f32({batch_, 2})}};
  }
  graph::Tensor build_graph(const std::vector<graph::Tensor>& in) override {
    using namespace graph;
    Graph& g = in[0].graph();
    const Activation leaky = [](Tensor t) { return leaky_relu(t, 0.2f); };
    Tensor fake;
    {
      VariableScope gen(g, "gen");
      fake = identity(FullyConnected("fc1", FullyConnected("fc0", in[1], 8, {.activation = leaky}), 1), "fake");
    }
    const auto discriminator = [&](Tensor x, Reuse reuse) {
      VariableScope d(g, "discrim", reuse);
      return FullyConnected("fc1", FullyConnected("fc0", x, 8, {.activation = leaky}), 1);
    };
    const Tensor real_logits = discriminator(in[0], Reuse::inherit), fake_logits = discriminator(fake, Reuse::yes);
    const Tensor ones = broadcast_to(scalar(g, 1.0f), {batch_, 1}), zeros = broadcast_to(scalar(g, 0.0f), {batch_, 1});
    const Tensor d_loss = reduce_mean(sigmoid_cross_entropy(real_logits, ones)) +
                          reduce_mean(sigmoid_cross_entropy(fake_logits, zeros));
    const Tensor g_loss = reduce_mean(sigmoid_cross_entropy(fake_logits, ones));
    return set_losses(g_loss, d_loss);
  }
  graph::Optimizer optimizer(graph::Graph& g) override { return adam_ ? graph::adam(g, 0.01f, 0.5f) : graph::sgd(g, 0.05f); }

 private:
  bool adam_;
  std::int64_t batch_;
};

// `count` batches of `batch` {real, z}: real samples around 3, noise uniform in [-1, 1].
inline std::vector<dataflow::Datapoint> batches(int count, std::int64_t batch = kBatch) {
  Rng rng(17);
  std::vector<dataflow::Datapoint> out;
  for (int b = 0; b < count; ++b) {
    Array real(DType::f32, Shape{batch, 1}), z(DType::f32, Shape{batch, 2});
    for (float& v : real.data<float>()) v = 3.0f + 0.5f * rng.normal();
    for (float& v : z.data<float>()) v = rng.uniform(-1, 1);
    out.push_back({real, z});
  }
  return out;
}

// A resumed GAN run ended where the uninterrupted one did: the same global step, and
// every variable, both nets' optimizer slots included, bit for bit.
inline void expect_same_gan_state(train::Trainer& whole, train::Trainer& resumed) {
  EXPECT_EQ(resumed.global_step(), whole.global_step());
  const auto expected = all_variables(whole), got = all_variables(resumed);
  ASSERT_EQ(expected.size(), got.size());
  EXPECT_TRUE(expected.count("gen/fc0/W/Adam") && expected.count("discrim/fc0/W/Adam_1")) << "both nets' slots";
  for (const auto& [name, value] : expected)
    EXPECT_EQ(0, std::memcmp(value.bytes().data(), got.at(name).bytes().data(), value.nbytes())) << name;
}

}  // namespace vkp::test
