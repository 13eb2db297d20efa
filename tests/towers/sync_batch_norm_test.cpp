// Synchronized BatchNorm (BatchNormOptions::sync_statistics): towers that exchange their
// moments in forward and their sums of dy and dy * xhat in backward (cross_tower_mean,
// through the host) train as one tower on the concatenated batch does with plain
// BatchNorm, for replicated towers and a parameter server (its master on the host or the
// first tower), with gradient buckets cut around the exchanges and with unequal halves;
// per-tower BatchNorm does not. The reference is a single session, which takes no
// exchange at all.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/error.h"
#include "engine/graph/layers.h"
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

class SyncBatchNorm : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { close_tower_devices(); }
};

constexpr std::int64_t kRows = 48, kFeatures = 6;

// x [?, 6] -> FC 16 -> BatchNorm -> relu -> FC 12 -> BNReLU -> FC 3; mean cross entropy.
struct Model {
  Tensor x, label, cost;
};
Model model(Graph& g, std::int64_t rows, bool sync) {
  Model m;
  m.x = placeholder(g, "x", f32({rows, kFeatures}));
  m.label = placeholder(g, "label", i32({rows}));
  Tensor h = relu(BatchNorm("bn0", FullyConnected("fc0", m.x, 16), {.sync_statistics = sync}));
  h = BNReLU("bn1", FullyConnected("fc1", h, 12), {.sync_statistics = sync});
  m.cost = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc2", h, 3), m.label));
  return m;
}

// With the moving averages' updates (the update-ops collection) in the train op.
Optimizer make_optimizer(Graph& g) { return momentum(g, 0.1f, 0.9f); }

constexpr const char* kCompared[] = {"fc0/W",     "bn0/gamma", "bn0/beta",     "bn0/mean/EMA", "fc1/W",
                                     "bn1/gamma", "bn1/beta",  "bn1/mean/EMA", "fc2/W",        "fc2/b"};

// The largest relative difference between tower 0 and one session on the whole batch
// after six steps, with the batch cut at `split` rows.
double after_six_steps(bool sync, towers::TowerOptions options, std::int64_t split) {
  options.seed = 3;
  std::unique_ptr<towers::Towers> t = towers::make_towers(
      tower_devices(2),
      [sync](Graph& g, int) {
        const Model m = model(g, kUnknown, sync);
        return towers::Tower{{m.x, m.label}, m.cost};
      },
      make_optimizer, options);
  Graph g(3);
  const Model m = model(g, kRows, false);
  const std::vector<Tensor> train = make_optimizer(g).minimize(m.cost);
  Session one(g, device());
  const std::vector<std::vector<Array>> batches = three_class_batches(6, kRows, 41, kFeatures);
  for (std::uint64_t step = 0; step < batches.size(); ++step) {
    const std::vector<Array>& b = batches[step];
    t->step(std::vector<std::vector<Array>>{rows(b, 0, split), rows(b, split, kRows)}, step);
    one.set_global_step(step);
    one.run({{m.x, b[0]}, {m.label, b[1]}}, {}, train);
  }
  double worst = 0;
  for (const char* name : kCompared) {
    worst = std::max(worst, relative_difference(t->session(0).variable(name), one.variable(name)));
    // Per-tower statistics: each tower's moving averages follow its own half.
    if (sync || std::string(name).find("EMA") == std::string::npos) {
      EXPECT_EQ(relative_difference(t->session(1).variable(name), t->session(0).variable(name)), 0.0) << name;
    }
  }
  return worst;
}

// Float32 sums in another order (two halves, E[x^2] - E[x]^2 for the variance): the
// single-device BatchNorm tests allow 2e-5 a value; six steps of momentum carry it on.
constexpr double kTolerance = 1e-4;

TEST_F(SyncBatchNorm, TwoReplicatedTowersTrainAsOneTowerOnTheWholeBatch) {
  const double sync = after_six_steps(true, {.reduction = towers::Reduction::replicated}, kRows / 2);
  EXPECT_LT(sync, kTolerance);
  const double own = after_six_steps(false, {.reduction = towers::Reduction::replicated}, kRows / 2);
  EXPECT_GT(own, 100 * kTolerance) << "per-tower statistics trained as the whole batch's";
  std::printf("largest relative difference to one tower: sync %.2g, per tower %.2g\n", sync, own);
}

TEST_F(SyncBatchNorm, UnequalHalvesWeighTheirMomentsByTheirRows) {
  EXPECT_LT(after_six_steps(true, {.reduction = towers::Reduction::replicated}, 16), kTolerance);
}

TEST_F(SyncBatchNorm, GradientBucketsCutAroundTheExchanges) {
  EXPECT_LT(after_six_steps(true, {.reduction = towers::Reduction::replicated, .bucket_bytes = 256}, kRows / 2),
            kTolerance);
}

TEST_F(SyncBatchNorm, AParameterServerOnTheHostTrainsAsOneTower) {
  EXPECT_LT(after_six_steps(true, {.reduction = towers::Reduction::parameter_server}, kRows / 2), kTolerance);
}

TEST_F(SyncBatchNorm, AParameterServerOnTheFirstTowerTrainsAsOneTower) {
  EXPECT_LT(after_six_steps(true, {.reduction = towers::Reduction::parameter_server, .master = towers::Master::device},
                            kRows / 2),
            kTolerance);
}

TEST_F(SyncBatchNorm, AsynchronousTowersRefuseIt) {
  towers::AsyncTowers t(tower_devices(2),
                        [](Graph& g, int) {
                          const Model m = model(g, kUnknown, true);
                          return towers::Tower{{m.x, m.label}, m.cost};
                        },
                        make_optimizer, {.reduction = towers::Reduction::async, .seed = 3});
  const std::vector<Array> b = three_class_batches(1, kRows, 41, kFeatures)[0];
  try {
    t.step(std::vector<std::vector<Array>>{rows(b, 0, kRows / 2), rows(b, kRows / 2, kRows)}, 0);
    FAIL() << "async towers exchanged values";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("sync_statistics"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
