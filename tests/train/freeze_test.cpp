// Freezing for fine-tuning (FreezeVariables, layers' trainable = false): 50 steps of Adam
// leave the frozen variables bit for bit as they were and give them no optimizer slots,
// while the rest moves; a frozen BatchNorm in a training tower normalises with its moving
// statistics (checked against the formula on the host) and updates nothing; a trainable
// variable reused inside a frozen scope gets no gradient through it.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

using namespace graph;

bool same_bits(const Array& a, const Array& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

// fc0 and bn frozen by a scope, mid by its option, fc1 trained; Adam.
class PartlyFrozenModel : public TinyModel {
 public:
  Tensor build_graph(const std::vector<Tensor>& in) override {
    Graph& g = in[0].graph();
    Tensor t;
    {
      FreezeVariables freeze(g);
      t = relu(BatchNorm("bn", FullyConnected("fc0", in[0], 8)));
    }
    t = FullyConnected("mid", t, 8, {.activation = [](Tensor x) { return relu(x); }, .trainable = false});
    t = BatchNorm("bn2", t, {.trainable = false});
    const Tensor logits = FullyConnected("fc1", t, 3);
    return reduce_mean(sparse_softmax_cross_entropy(logits, in[1]));
  }
  Optimizer optimizer(Graph& g) override { return adam(g, 0.05f); }
};

TEST(FreezeVariables, FiftyStepsLeaveFrozenVariablesBitForBitAndMoveTheRest) {
  train::TrainConfig config = tiny_config(10, 5);  // 50 steps
  config.model = std::make_shared<PartlyFrozenModel>();
  train::SimpleTrainer trainer(device(), 4);
  std::map<std::string, Array> before;
  auto look = std::make_shared<Hooks>();
  look->before_epoch = [&](callbacks::TrainerView&) {
    if (before.empty()) before = all_variables(trainer);
  };
  config.callbacks = {look};
  train::launch_train_with_config(std::move(config), trainer);
  ASSERT_EQ(trainer.global_step(), 50);
  const std::map<std::string, Array> after = all_variables(trainer);
  const std::vector<std::string> frozen = {"fc0/W",       "fc0/b",           "bn/gamma",         "bn/beta",
                                           "bn/mean/EMA", "bn/variance/EMA", "mid/W",            "mid/b",
                                           "bn2/gamma",   "bn2/beta",        "bn2/mean/EMA",     "bn2/variance/EMA"};
  for (const std::string& name : frozen) {
    ASSERT_TRUE(before.count(name)) << name;
    EXPECT_TRUE(same_bits(after.at(name), before.at(name))) << name << " moved";
  }
  for (const char* name : {"fc1/W", "fc1/b"}) EXPECT_FALSE(same_bits(after.at(name), before.at(name))) << name;
  for (const auto& [name, value] : after) {
    const bool slot = name.find("/Adam") != std::string::npos;
    if (!slot) continue;
    EXPECT_EQ(name.rfind("fc1/", 0), 0u) << "a slot for a frozen variable: " << name;
  }
  EXPECT_TRUE(after.count("fc1/W/Adam") && after.count("fc1/W/Adam_1"));
  EXPECT_EQ(trainer.graph().trainable_variables().size(), 2u);
}

TEST(FreezeVariables, AFrozenBatchNormNormalisesWithItsMovingStatistics) {
  Graph g(2);
  const Tensor x = placeholder(g, "x", f32({6, 4}));
  Tensor y;
  {
    TowerContext training(g, "", 0, true);
    FreezeVariables freeze(g);
    y = BatchNorm("bn", x, {.epsilon = 1e-3f});
  }
  EXPECT_TRUE(g.collection(kUpdateOps).empty()) << "a frozen BatchNorm updates its averages";
  EXPECT_TRUE(g.trainable_variables().empty());
  Session s(g, device());
  Rng rng(8);
  auto random = [&](float offset, float scale) {
    Array a(DType::f32, Shape{4});
    for (float& v : a.data<float>()) v = offset + scale * std::abs(rng.normal());
    return a;
  };
  const Array mean = random(-0.5f, 1.0f), variance = random(0.2f, 2.0f), gamma = random(0.5f, 1.0f),
              beta = random(-1.0f, 1.0f);
  s.set_variables({"bn/mean/EMA", "bn/variance/EMA", "bn/gamma", "bn/beta"}, {mean, variance, gamma, beta});
  Array in(DType::f32, Shape{6, 4});
  for (float& v : in.data<float>()) v = 3.0f * rng.normal();
  const Array out = s.run({{x, in}}, {y})[0];
  for (std::size_t i = 0; i < 24; ++i) {
    const std::size_t c = i % 4;
    const double want = (in.data<float>()[i] - mean.data<float>()[c]) / std::sqrt(variance.data<float>()[c] + 1e-3) *
                            gamma.data<float>()[c] +
                        beta.data<float>()[c];
    EXPECT_NEAR(out.data<float>()[i], want, 1e-5 * (1 + std::abs(want))) << i;
  }
}

TEST(FreezeVariables, ATrainableVariableReusedInsideGetsNoGradientThroughIt) {
  Graph g(3);
  const Tensor w = get_variable(g, "w", {3}, ones());
  Tensor frozen_read;
  {
    FreezeVariables freeze(g);
    VariableScope reuse(g, "", Reuse::yes);
    frozen_read = get_variable(g, "w", {3}, ones());
  }
  EXPECT_FALSE(gradients(reduce_sum(frozen_read * frozen_read), {w})[0].valid());
  EXPECT_TRUE(gradients(reduce_sum(w * frozen_read), {w})[0].valid()) << "the direct read still has its gradient";
}

}  // namespace
}  // namespace vkp::test
