// Mixed precision on replicated towers (TowerOptions::loss_scale): two towers, each on
// half of the batch with float16 activations and gradients, reach what one tower in
// mixed precision reaches on the whole batch (within the relative difference of 1e-3
// the single-device float16 tests allow: float16 rounding differs where float32 sums
// differ in order); an overflow in one tower's half skips the step on every tower and
// halves every tower's scale; what it does not support is refused by name.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "engine/graph/grad_proc.h"
#include "engine/graph/layers.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "tower_fixtures.h"
#include "towers/async_towers.h"
#include "towers/sync_towers.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

class MixedPrecisionTowers : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { close_tower_devices(); }
};

constexpr std::int64_t kRows = 128, kFeatures = 32;  // 64 x 64 activations a tower: stored as float16
constexpr LossScaleOptions kScaling{.initial_scale = 1024.0f, .growth_interval = 3};

// x [?, 32] -> FC 64 (relu) -> FC 3; mean cross entropy times a fed factor (1e38 makes
// the gradients overflow float32 itself, whatever float16 does).
struct Model {
  Tensor x, label, factor, cost;
};
Model model(Graph& g, std::int64_t rows) {
  Model m;
  m.x = placeholder(g, "x", f32({rows, kFeatures}));
  m.label = placeholder(g, "label", i32({rows}));
  m.factor = placeholder(g, "factor", f32({}));
  const Tensor h = FullyConnected("fc0", m.x, 64, {.activation = [](Tensor t) { return relu(t); }});
  m.cost = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc1", h, 3), m.label)) * m.factor;
  return m;
}

Optimizer make_optimizer(Graph& g) { return momentum(g, 0.1f, 0.9f); }

float scalar_of(Session& s, const char* name) { return s.variable(name).data<float>()[0]; }

Array scalar_array(float v) {
  Array a(DType::f32, Shape{});
  a.data<float>()[0] = v;
  return a;
}

TEST_F(MixedPrecisionTowers, TwoTowersMatchOneOnTheWholeBatchAndSkipTogether) {
  towers::ReplicatedTowers t(tower_devices(2),
                             [](Graph& g, int) {
                               const Model m = model(g, kUnknown);
                               return towers::Tower{{m.x, m.label, m.factor}, m.cost};
                             },
                             make_optimizer, {.seed = 3, .loss_scale = kScaling});
  Graph g(3);
  const Model m = model(g, kRows);
  const ScaledTrainOp train = minimize_with_loss_scaling(make_optimizer(g), m.cost, kScaling);
  Session one(g, device(), {.f16_storage = true});
  // The same in float32: the towers must be nearer the float16 run than this one (they
  // do store float16).
  Graph g32(3);
  const Model m32 = model(g32, kRows);
  const ScaledTrainOp train32 = minimize_with_loss_scaling(make_optimizer(g32), m32.cost, kScaling);
  Session plain(g32, device());
  // Step 4 overflows in tower 1's half only: every tower skips it, as one tower does.
  const std::vector<std::vector<Array>> batches = three_class_batches(8, kRows, 100, kFeatures);
  for (std::uint64_t step = 0; step < batches.size(); ++step) {
    SCOPED_TRACE("step " + std::to_string(step));
    const std::vector<Array>& b = batches[step];
    const float factor = step == 4 ? 1e38f : 1.0f;
    std::vector<std::vector<Array>> halves = {rows(b, 0, kRows / 2), rows(b, kRows / 2, kRows)};
    halves[0].push_back(scalar_array(1.0f));
    halves[1].push_back(scalar_array(factor));
    t.step(halves, step);
    one.set_global_step(step);
    one.run({{m.x, b[0]}, {m.label, b[1]}, {m.factor, scalar_array(factor)}}, {}, train.train_op);
    plain.set_global_step(step);
    plain.run({{m32.x, b[0]}, {m32.label, b[1]}, {m32.factor, scalar_array(factor)}}, {}, train32.train_op);
    for (int k = 0; k < 2; ++k)
      for (const char* name : {kLossScaleVariable, kGoodStepsVariable, kSkippedStepsVariable})
        EXPECT_EQ(scalar_of(t.session(k), name), scalar_of(one, name)) << "tower " << k << ", " << name;
  }
  // 1024, doubled after steps 0-2, halved by step 4, doubled after steps 5-7.
  EXPECT_EQ(scalar_of(t.session(0), kSkippedStepsVariable), 1.0f);
  EXPECT_EQ(scalar_of(t.session(0), kLossScaleVariable), 2048.0f);
  double to_f16 = 0, to_f32 = 0;
  for (const char* name : {"fc0/W", "fc0/b", "fc1/W", "fc1/b", "fc0/W/Momentum", "fc1/W/Momentum"}) {
    const double d = relative_difference(t.session(0).variable(name), one.variable(name));
    EXPECT_LT(d, 1e-3) << name;
    EXPECT_EQ(relative_difference(t.session(1).variable(name), t.session(0).variable(name)), 0.0) << name;
    to_f16 += d;
    to_f32 += relative_difference(t.session(0).variable(name), plain.variable(name));
  }
  EXPECT_LT(10 * to_f16, to_f32) << "the towers computed as in float32";
}

towers::Tower tower_of(Graph& g, int) {
  const Model m = model(g, kUnknown);
  return towers::Tower{{m.x, m.label, m.factor}, m.cost};
}

// The host evaluates the optimizer's shader expressions in its order (see
// TowersTest.HostMasterIsBitwiseTheDeviceMasterForEveryOptimizer): bitwise equal on a
// CPU device, within 1e-5 on a GPU.
double host_tolerance() { return tower_devices(1)[0]->kind() == vk::DeviceKind::cpu ? 0.0 : 1e-5; }

// A parameter server applies the averages of scaled gradients as replicated towers do:
// with its master on tower 0 through the same guarded update, sending the parameters and
// the loss scale's state on; with its master on the host by checking, unscaling and
// moving the scale there. Every tower ends where replicated towers do, the step that
// overflowed (skipped) and the scale's growth included.
TEST_F(MixedPrecisionTowers, AParameterServerTrainsAsReplicatedTowersWhereverItsMaster) {
  for (const towers::Master master : {towers::Master::device, towers::Master::host}) {
    SCOPED_TRACE(master == towers::Master::host ? "master on the host" : "master on tower 0");
    towers::ReplicatedTowers replicated(tower_devices(2), tower_of, make_optimizer,
                                        {.seed = 3, .loss_scale = kScaling});
    towers::ParameterServerTowers server(
        tower_devices(2), tower_of, make_optimizer,
        {.reduction = towers::Reduction::parameter_server, .seed = 3, .master = master, .loss_scale = kScaling});
    const std::vector<std::vector<Array>> batches = three_class_batches(6, kRows, 101, kFeatures);
    for (std::uint64_t step = 0; step < batches.size(); ++step) {
      const std::vector<Array>& b = batches[step];
      std::vector<std::vector<Array>> halves = {rows(b, 0, kRows / 2), rows(b, kRows / 2, kRows)};
      halves[0].push_back(scalar_array(step == 2 ? 1e38f : 1.0f));  // step 2 overflows
      halves[1].push_back(scalar_array(1.0f));
      replicated.step(halves, step);
      server.step(halves, step);
    }
    // 1024 halved by the overflow at step 2, doubled after the three good steps 3-5.
    EXPECT_EQ(scalar_of(server.session(1), kSkippedStepsVariable), 1.0f);
    EXPECT_EQ(scalar_of(server.session(1), kLossScaleVariable), 1024.0f);
    const double tolerance = master == towers::Master::host ? host_tolerance() : 0.0;
    for (int k = 0; k < 2; ++k)
      for (const char* name :
           {"fc0/W", "fc0/b", "fc1/W", "fc1/b", kLossScaleVariable, kGoodStepsVariable, kSkippedStepsVariable})
        EXPECT_LE(relative_difference(server.session(k).variable(name), replicated.session(k).variable(name)),
                  tolerance)
            << "tower " << k << ", " << name;
  }
}

// One async tower is sequential training: each update is a one-device mixed-precision
// step's (the loss scale kept, checked, applied and moved on the host), the overflowing
// update skipped.
TEST_F(MixedPrecisionTowers, OneAsyncTowerIsSequentialMixedPrecisionTraining) {
  towers::AsyncTowers async(tower_devices(1), tower_of, make_optimizer,
                            {.reduction = towers::Reduction::async, .seed = 3, .loss_scale = kScaling});
  Graph g(3);
  const Model m = model(g, kRows / 2);
  const ScaledTrainOp train = minimize_with_loss_scaling(make_optimizer(g), m.cost, kScaling);
  Session one(g, device(), {.f16_storage = true});
  const std::vector<std::vector<Array>> batches = three_class_batches(6, kRows / 2, 102, kFeatures);
  for (std::uint64_t step = 0; step < batches.size(); ++step) {
    std::vector<Array> b = batches[step];
    b.push_back(scalar_array(step == 3 ? 1e38f : 1.0f));  // update 3 overflows
    async.feed(b);
    one.run({{m.x, b[0]}, {m.label, b[1]}, {m.factor, b[2]}}, {}, train.train_op);
  }
  async.drain();
  EXPECT_EQ(scalar_of(async.session(0), kSkippedStepsVariable), 1.0f);
  for (const char* name :
       {"fc0/W", "fc0/b", "fc1/W", "fc1/b", kLossScaleVariable, kGoodStepsVariable, kSkippedStepsVariable})
    EXPECT_LE(relative_difference(async.session(0).variable(name), one.variable(name)), host_tolerance()) << name;
}

Array minus(const Array& a, const Array& b) {
  Array out = a;
  for (std::size_t i = 0; i < out.data<float>().size(); ++i) out.data<float>()[i] -= b.data<float>()[i];
  return out;
}

// Gradient processors see the true gradients, as minimize_with_loss_scaling's do on one
// device: a global-norm clip that acts at every step moves the towers' weights as one
// device moves them (every reduction, within float16's rounding), and not as without
// the clip; a clip of the scaled averages would move them 1024 times less.
TEST_F(MixedPrecisionTowers, GradientProcessorsSeeTheUnscaledGradients) {
  const auto clipped = [](Graph& g) {
    return apply_grad_processors(make_optimizer(g), {std::make_shared<GlobalNormClip>(0.05f)});
  };
  const std::vector<std::vector<Array>> batches = three_class_batches(4, kRows, 103, kFeatures);
  const char* const names[] = {"fc0/W", "fc1/W"};
  const auto one_device = [&](const towers::Towers::OptimizerFn& optimizer, std::vector<Array>& initial) {
    Graph g(3);
    const Model m = model(g, kRows);
    const ScaledTrainOp train = minimize_with_loss_scaling(optimizer(g), m.cost, kScaling);
    Session one(g, device(), {.f16_storage = true});
    for (const char* name : names) initial.push_back(one.variable(name));
    for (const std::vector<Array>& b : batches)
      one.run({{m.x, b[0]}, {m.label, b[1]}, {m.factor, scalar_array(1.0f)}}, {}, train.train_op);
    std::vector<Array> moved;
    for (std::size_t i = 0; i < std::size(names); ++i) moved.push_back(minus(one.variable(names[i]), initial[i]));
    return moved;
  };
  std::vector<Array> initial, unused;
  const std::vector<Array> want = one_device(clipped, initial);
  const std::vector<Array> unclipped = one_device(make_optimizer, unused);
  for (std::size_t i = 0; i < std::size(names); ++i)
    EXPECT_GT(relative_difference(unclipped[i], want[i]), 0.5) << names[i] << ": the clip does not act";
  for (towers::Reduction r : {towers::Reduction::replicated, towers::Reduction::parameter_server}) {
    SCOPED_TRACE(towers::to_string(r));
    const auto t =
        towers::make_towers(tower_devices(2), tower_of, clipped, {.reduction = r, .seed = 3, .loss_scale = kScaling});
    for (std::uint64_t step = 0; step < batches.size(); ++step) {
      const std::vector<Array>& b = batches[step];
      std::vector<std::vector<Array>> halves = {rows(b, 0, kRows / 2), rows(b, kRows / 2, kRows)};
      for (auto& h : halves) h.push_back(scalar_array(1.0f));
      t->step(halves, step);
    }
    for (std::size_t i = 0; i < std::size(names); ++i)
      EXPECT_LT(relative_difference(minus(t->session(1).variable(names[i]), initial[i]), want[i]), 2e-2) << names[i];
  }
  // One async tower on the whole batches: sequential training, each gradient clipped
  // unscaled on its thread.
  towers::AsyncTowers async(tower_devices(1), tower_of, clipped,
                            {.reduction = towers::Reduction::async, .seed = 3, .loss_scale = kScaling});
  for (const std::vector<Array>& b : batches) async.feed({b[0], b[1], scalar_array(1.0f)});
  async.drain();
  for (std::size_t i = 0; i < std::size(names); ++i)
    EXPECT_LT(relative_difference(minus(async.session(0).variable(names[i]), initial[i]), want[i]), 2e-2)
        << "async " << names[i];
}

}  // namespace
}  // namespace vkp::test
