// Collections backed up, restored and frozen; what a set of targets depends on; rms
// against the formula on the host.
#include "engine/graph/collections.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;

TEST(Collections, ARestoreUndoesWhatWasAddedAndRemovesNewKeys) {
  Graph g;
  const Tensor a = placeholder(g, "a", f32({2})), b = exp(a), c = log(a);
  g.add_to_collection("losses", a);
  const CollectionBackup backup = backup_collection(g, {"losses", "update_ops"});
  g.add_to_collection("losses", b);
  g.add_to_collection("update_ops", c);
  g.add_to_collection("summaries", c);
  ASSERT_EQ(g.collection("losses").size(), 2u);
  restore_collection(g, backup);
  EXPECT_EQ(g.collection("losses"), std::vector<Tensor>{a});
  EXPECT_TRUE(g.collection("update_ops").empty()) << "a key the backup held empty is emptied";
  EXPECT_EQ(g.collection("summaries").size(), 1u) << "a key the backup did not name is left alone";
  const CollectionBackup all = backup_collection(g);
  EXPECT_EQ(all.size(), 2u) << "no keys: every collection (losses, summaries)";
}

TEST(Collections, FreezeDropsWhatItsScopeAdded) {
  Graph g;
  const Tensor a = placeholder(g, "a", f32({2}));
  g.add_to_collection("update_ops", a);
  {
    FreezeCollection frozen(g, {"update_ops"});
    g.add_to_collection("update_ops", exp(a));
    g.add_to_collection("losses", exp(a));
    EXPECT_EQ(g.collection("update_ops").size(), 2u) << "inside, the collection grows as usual";
  }
  EXPECT_EQ(g.collection("update_ops"), std::vector<Tensor>{a});
  EXPECT_EQ(g.collection("losses").size(), 1u) << "not frozen";
  EXPECT_THROW(FreezeCollection(g, {}), Error);
}

TEST(Dependency, FollowsInputsBackFromTheTargetsOnly) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({3})), y = placeholder(g, "y", f32({3}));
  const Tensor hidden = exp(x), out = hidden + x, other = log(y);
  EXPECT_TRUE(dependency_of_targets({out}, x));
  EXPECT_TRUE(dependency_of_targets({out}, hidden));
  EXPECT_TRUE(dependency_of_targets({out}, out)) << "a target depends on itself";
  EXPECT_FALSE(dependency_of_targets({out}, y));
  EXPECT_FALSE(dependency_of_targets({out}, other));
  EXPECT_TRUE(dependency_of_targets({out, other}, y));
  EXPECT_FALSE(dependency_of_targets({hidden}, out)) << "what reads a target is not its dependency";
  EXPECT_FALSE(dependency_of_targets({}, x));
  Graph elsewhere;
  EXPECT_FALSE(dependency_of_targets({placeholder(elsewhere, "x", f32({3}))}, x));
}

TEST(PrintStat, RegistersTrainingTowersOnly) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({3}));
  EXPECT_EQ(print_stat(x, "x"), x) << "returns its input";
  ASSERT_EQ(g.collection(kPrintStats).size(), 1u);
  EXPECT_EQ(g.collection(kPrintStats)[0].dims(), (std::vector<std::int64_t>{2})) << "mean and rms";
  {
    TowerContext inference(g, "InferenceTower", 0, false);
    print_stat(exp(x), "x");
  }
  EXPECT_EQ(g.collection(kPrintStats).size(), 1u) << "a step never feeds an inference tower's placeholders";
}

TEST(Rms, IsTheRootOfTheMeanSquareOverEveryElement) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({3, 5}));
  const Tensor r = rms(x);
  EXPECT_EQ(r.rank(), 0);
  std::vector<float> values(15);
  double sum = 0;
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = std::sin(static_cast<float>(i) * 1.7f) * static_cast<float>(i % 4 + 1);
    sum += double(values[i]) * values[i];
  }
  Session session(g, device());
  const std::vector<Array> got = session.run({{x, Array::from(Shape{3, 5}, values)}}, {r});
  EXPECT_NEAR(got[0].data<float>()[0], std::sqrt(sum / 15), 1e-5);
}

}  // namespace
}  // namespace vkp::test
