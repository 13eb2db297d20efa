// Asynchronous towers (Reduction::async), each on a thread of its own:
//   - one tower is plain sequential training: its updates equal a one-device session's
//     optimizer step for step (Adam's bias correction numbered by the master's count,
//     also when the count starts elsewhere, as after a resume);
//   - a tower slowed on purpose does not hold the fast one back (the fast tower applies
//     most updates, where lock step would share them evenly) and the run still learns;
//     the slow tower's gradients are reported stale;
//   - async_max_lead bounds the lead (and so the staleness), holding the fast tower;
//   - a thread's error reaches the caller naming the tower, and the towers go on after it;
//   - a hyperparameter set while the threads run reaches the master and every tower.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>

#include "core/error.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "max_difference.h"
#include "slow_work.h"
#include "tower_fixtures.h"
#include "towers/async_towers.h"
#include "towers/sync_towers.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

class AsyncTowers : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { close_tower_devices(); }
};

// x f32 [?, 5] -> FC 7 (relu) -> FC 3; mean cross entropy. `slow`: the cost also holds
// zero times a chain of products made from the input, which no variable depends on: the
// same gradients, many times the dispatches (a slower GPU; slow_work.h).
towers::Tower build(Graph& g, bool slow = false) {
  const Tensor x = placeholder(g, "x", f32({kUnknown, 5}));
  const Tensor label = placeholder(g, "label", i32({kUnknown}));
  const Tensor h = relu(FullyConnected("fc0", x, 7));
  Tensor cost = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc1", h, 3), label));
  if (slow) cost = cost + slow_work(x);
  return {{x, label}, cost};
}

const std::string& var_name(const Tensor& v) { return std::get<VariableAttrs>(v.node().attrs).var_name; }

// The cost of tower 0's model on `batch`, run by its session (towers drained).
double cost_on(towers::Towers& t, const std::vector<Array>& batch) {
  const towers::Tower& tw = t.tower(0);
  return t.session(0).run({{tw.inputs[0], batch[0]}, {tw.inputs[1], batch[1]}}, {tw.cost})[0].data<float>()[0];
}

// One tower, Adam: async is sequential training, each update the one-device session's
// step with t = the master's count + 1. `from`: the count the updates start at.
void expect_one_tower_is_sequential_adam(std::uint64_t from) {
  auto optimizer = [](Graph& g) { return adam(g, 0.05f); };
  towers::AsyncTowers t(tower_devices(1), [](Graph& g, int) { return build(g); }, optimizer,
                        {.reduction = towers::Reduction::async, .seed = 4});
  Graph g(4);
  const towers::Tower ref = build(g);
  const std::vector<Tensor> train = optimizer(g).minimize(ref.cost);
  Session s(g, device());
  const auto batches = three_class_batches(4, 8, 21);
  t.count_updates_from(from);
  for (const std::vector<Array>& b : batches) t.feed(b);
  t.drain();
  for (std::size_t i = 0; i < batches.size(); ++i) {
    s.set_global_step(from + i);
    s.run({{ref.inputs[0], batches[i][0]}, {ref.inputs[1], batches[i][1]}}, {}, train);
  }
  for (const Tensor& v : g.variables()) {
    const std::string& name = var_name(v);
    // The master's arithmetic is the shader's, operation for operation: rounding apart,
    // four steps agree.
    EXPECT_LE(max_difference(t.session(0).variable(name), s.variable(name)), 1e-6f) << name << " from " << from;
  }
}

TEST_F(AsyncTowers, OneTowerIsSequentialTrainingUpdateForUpdate) { expect_one_tower_is_sequential_adam(0); }

TEST_F(AsyncTowers, UpdatesAreNumberedFromTheCountGivenForAdamsBiasCorrection) {
  // Numbered from 1000 the bias correction is nearly 1: a master numbering from 0 again
  // would take steps about 3x (1/sqrt(1 - 0.999)) / (1/(1 - 0.9)) apart from the reference.
  expect_one_tower_is_sequential_adam(1000);
}

// Two towers, tower 1 slowed, 48 batches through the shared queue; the held-out cost
// before and after, and after sequential training on the same batches in one session.
struct SlowRun {
  towers::AsyncStats stats;
  double before = 0, after = 0, sequential = 0;
};

Optimizer slow_run_optimizer(Graph& g) { return momentum(g, 0.1f, 0.9f); }

double cost_after_sequential_training(const std::vector<std::vector<Array>>& batches, const std::vector<Array>& held_out) {
  Graph g(6);
  const towers::Tower ref = build(g);
  const std::vector<Tensor> train = slow_run_optimizer(g).minimize(ref.cost);
  Session s(g, device());
  for (const std::vector<Array>& b : batches) s.run({{ref.inputs[0], b[0]}, {ref.inputs[1], b[1]}}, {}, train);
  return s.run({{ref.inputs[0], held_out[0]}, {ref.inputs[1], held_out[1]}}, {ref.cost})[0].data<float>()[0];
}

SlowRun run_with_a_slow_tower(int max_lead) {
  towers::AsyncTowers t(tower_devices(2), [](Graph& g, int k) { return build(g, k == 1); }, slow_run_optimizer,
                        {.reduction = towers::Reduction::async, .seed = 6, .async_max_lead = max_lead});
  const auto held_out = three_class_batches(1, 256, 99)[0];
  SlowRun run;
  run.before = cost_on(t, held_out);
  const auto batches = three_class_batches(48, 16, 31);
  run.sequential = cost_after_sequential_training(batches, held_out);
  // Each tower's first step builds its kernels, which takes longer than the slow work: the
  // first two batches, one a tower, are left out of the counts.
  t.feed(0, batches[0]);
  t.feed(1, batches[1]);
  t.drain();
  (void)t.take_async_stats();
  for (std::size_t i = 2; i < batches.size(); ++i) t.feed(batches[i]);
  t.drain();
  run.stats = t.take_async_stats();
  run.after = cost_on(t, held_out);
  for (const std::string& name : t.trainable_names())
    EXPECT_EQ(max_difference(t.session(1).variable(name), t.session(0).variable(name)), 0.0f)
        << name << ": after drain every tower holds the master's parameters";
  return run;
}

// The held-out cost half way from the untrained one to sequential training's.
double learned_half_way(const SlowRun& run) { return run.before - 0.5 * (run.before - run.sequential); }

TEST_F(AsyncTowers, ASlowTowerDoesNotHoldTheFastOneBack) {
  const SlowRun run = run_with_a_slow_tower(-1);
  const towers::AsyncStats& s = run.stats;
  ASSERT_EQ(s.updates.size(), 2u);
  RecordProperty("fast_updates", static_cast<int>(s.updates[0]));  // in --gtest_output's file
  RecordProperty("slow_updates", static_cast<int>(s.updates[1]));
  EXPECT_EQ(s.updates[0] + s.updates[1], 46u) << "every batch fed is applied once";
  // Lock step would give each tower 23; free-running, the fast tower takes most.
  EXPECT_GE(s.updates[0], 3 * s.updates[1]) << "fast " << s.updates[0] << ", slow " << s.updates[1];
  EXPECT_GE(s.updates[1], 1u);
  // While the slow tower computes, the fast one applies: the slow gradients are stale.
  EXPECT_GE(s.max_staleness[1], 2u);
  EXPECT_GT(s.mean_staleness[1], s.mean_staleness[0]);
  EXPECT_EQ(s.held_seconds[0], 0.0) << "no lead bound, nothing held";
  // And it learns: the held-out cost falls at least half as far as sequential training
  // on the same batches takes it (about 1.40 to 0.77 measured; the classes overlap). How
  // much further depends on how stale the slow tower's gradients came, which the
  // threads' timing decides: 0.91 was seen once under staged memory, 0.14 above the
  // sequential run's.
  EXPECT_LT(run.sequential, run.before - 0.4);
  EXPECT_LT(run.after, learned_half_way(run)) << "from " << run.before << " (sequential: " << run.sequential << ")";
}

TEST_F(AsyncTowers, MaxLeadBoundsTheFastTowersLeadAndTheStaleness) {
  const int lead = 1;
  const SlowRun run = run_with_a_slow_tower(lead);
  const towers::AsyncStats& s = run.stats;
  EXPECT_EQ(s.updates[0] + s.updates[1], 46u);
  const auto gap = static_cast<int>(s.updates[0]) - static_cast<int>(s.updates[1]);
  EXPECT_LE(std::abs(gap), lead + 1) << "fast " << s.updates[0] << ", slow " << s.updates[1];
  for (std::size_t k = 0; k < 2; ++k) EXPECT_LE(s.max_staleness[k], static_cast<std::uint64_t>(2 * lead + 1)) << k;
  EXPECT_GT(s.held_seconds[0], 0.0) << "the fast tower waited for the slow one";
  EXPECT_LT(run.after, learned_half_way(run)) << "from " << run.before << " (sequential: " << run.sequential << ")";
}

TEST_F(AsyncTowers, AThreadsErrorReachesTheCallerNamingTheTower) {
  towers::AsyncTowers t(
      tower_devices(2), [](Graph& g, int) { return build(g); }, [](Graph& g) { return sgd(g, 0.1f); },
      {.reduction = towers::Reduction::async});
  const auto batches = three_class_batches(3, 8, 2);
  t.feed(1, {batches[0][0]});  // one input of two
  try {
    t.drain();
    FAIL() << "a batch missing an input was applied";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("tower 1"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("takes 2 inputs"), std::string::npos) << e.what();
  }
  // The error is given once; the towers train on.
  t.feed(batches[1]);
  t.feed(batches[2]);
  t.drain();
  const towers::AsyncStats s = t.take_async_stats();
  EXPECT_EQ(s.updates[0] + s.updates[1], 2u) << "the two whole batches are applied, the broken one is not";
}

TEST_F(AsyncTowers, AHyperparameterSetWhileTheThreadsRunReachesTheMasterAndEveryTower) {
  towers::AsyncTowers t(
      tower_devices(2), [](Graph& g, int) { return build(g); }, [](Graph& g) { return sgd(g, 0.1f); },
      {.reduction = towers::Reduction::async});
  const auto batches = three_class_batches(6, 8, 3);
  t.feed(batches[0]);  // the threads run
  t.set_hyperparameter("learning_rate", 0.0f);
  EXPECT_EQ(t.hyperparameter("learning_rate"), 0.0f);
  t.drain();
  // Only tower 0 holds the optimizer's hyperparameters (the others compute gradients).
  EXPECT_EQ(t.session(0).hyperparameter("learning_rate"), 0.0f);
  const Array before = t.session(0).variable("fc0/W");
  for (std::size_t i = 1; i < batches.size(); ++i) t.feed(batches[i]);
  t.drain();
  EXPECT_EQ(max_difference(t.session(0).variable("fc0/W"), before), 0.0f) << "updates at learning rate 0 moved";
}

// The strategy classes take TowerOptions; the one check refuses what a strategy does not
// honour, and a class refuses options that name another strategy.
TEST_F(AsyncTowers, EachStrategyRefusesTheOptionsItCannotHonour) {
  const auto refused = [](const towers::TowerOptions& o) {
    try {
      towers::check_tower_options(o);
    } catch (const Error& e) {
      return e.code() == ErrorCode::unsupported || e.code() == ErrorCode::invalid_argument;
    }
    return false;
  };
  using towers::Reduction;
  EXPECT_TRUE(refused({.reduction = Reduction::async, .bucket_bytes = 1024}));
  EXPECT_TRUE(refused({.reduction = Reduction::async, .time_towers = true}));
  EXPECT_TRUE(refused({.reduction = Reduction::replicated, .master = towers::Master::device}));
  EXPECT_TRUE(refused({.reduction = Reduction::parameter_server, .async_scale = 0.5f}));
  EXPECT_TRUE(refused({.reduction = Reduction::replicated, .async_max_lead = 2}));
  EXPECT_TRUE(refused({.staging_buffers = 3}));
  EXPECT_FALSE(refused({.reduction = Reduction::parameter_server,
                        .master = towers::Master::device,
                        .bucket_bytes = 1024,
                        .staging_buffers = 2,
                        .time_towers = true}));
  EXPECT_FALSE(refused({.reduction = Reduction::async, .async_scale = 0.5f, .async_max_lead = 1}));
  const auto sgd_at = [](Graph& g) { return sgd(g, 0.1f); };
  const auto build_one = [](Graph& g, int) { return build(g); };
  EXPECT_THROW(towers::AsyncTowers(tower_devices(2), build_one, sgd_at, {}), Error);
  EXPECT_THROW(towers::ParameterServerTowers(tower_devices(2), build_one, sgd_at, {.reduction = Reduction::async}),
               Error);
  for (Reduction r : {Reduction::replicated, Reduction::parameter_server, Reduction::async})
    EXPECT_EQ(towers::make_towers(tower_devices(2), build_one, sgd_at, {.reduction = r})->reduction(), r);
}

}  // namespace
}  // namespace vkp::test
