// DataFlow::replay_obstacle(): a flow that says it replays gives, read again from a fresh
// instance with the same seeds, the same datapoints in the same order (what a resumed run
// relies on), and one whose order follows thread timing names itself.
#include <gtest/gtest.h>

#include <functional>

#include "test_flows.h"
#include "dataflow/batch_data.h"
#include "dataflow/concat_data.h"
#include "dataflow/locally_shuffle_data.h"
#include "dataflow/multi_thread_batch_data.h"
#include "dataflow/multi_thread_map_data.h"
#include "dataflow/multi_thread_runner.h"
#include "dataflow/random_mix_data.h"

namespace vkp::dataflow::test {
namespace {

using Factory = std::function<DataFlowPtr()>;

// Adds a random amount in [0, 1000) to the value, from the datapoint's own generator.
std::optional<Datapoint> jitter(Datapoint dp, Rng& rng) {
  dp[0] = scalar(value_of(dp[0]) + static_cast<std::int32_t>(rng.next_u32() % 1000));
  return dp;
}

DataFlowPtr shuffled(int n, std::uint64_t seed) {
  std::vector<Datapoint> list;
  for (int i = 0; i < n; ++i) list.push_back({scalar(i * 1000)});
  return std::make_unique<DataFromList>(std::move(list), true, seed);
}

// Every value of `epochs` epochs, batches flattened.
std::vector<int> read(DataFlow& df, int epochs) {
  std::vector<int> out;
  df.reset_state();
  for (int e = 0; e < epochs; ++e)
    for (Datapoint& dp : df.epoch())
      for (std::int64_t i = 0; i < dp[0].numel(); ++i) out.push_back(value_of(dp[0], i));
  return out;
}

TEST(ReplayObstacle, FlowsThatSayTheyReplayGiveTheSameStreamAgain) {
  const std::vector<std::pair<std::string, Factory>> pipelines = {
      {"shuffled list, local shuffle, ordered 3-thread random map, batches",
       [] {
         return std::make_unique<BatchData>(
             std::make_unique<MultiThreadMapData>(
                 std::make_unique<LocallyShuffleData>(shuffled(101, 7), 13, 5), jitter,
                 MultiThreadMapOptions{.num_threads = 3, .ordered = true, .chunk = 3, .seed = 9}),
             8);
       }},
      {"ordered 3-thread random map and batch",
       [] {
         return std::make_unique<MultiThreadBatchData>(shuffled(77, 3), 5, jitter,
                                                       MultiThreadBatchOptions{.num_threads = 3, .ordered = true});
       }},
      {"random mix of two shuffled lists",
       [] {
         std::vector<DataFlowPtr> flows;
         flows.push_back(shuffled(20, 1));
         flows.push_back(shuffled(31, 2));
         return std::make_unique<RandomMixData>(std::move(flows), 4);
       }},
      {"one-thread runner",
       [] {
         return std::make_unique<MultiThreadRunner>([](std::size_t i) { return shuffled(40, i); },
                                                    MultiThreadRunnerOptions{.num_threads = 1});
       }},
  };
  for (const auto& [name, make] : pipelines) {
    DataFlowPtr first = make(), second = make();
    EXPECT_EQ(first->replay_obstacle(), "") << name;
    const std::vector<int> a = read(*first, 3), b = read(*second, 3);
    EXPECT_GT(a.size(), 100u) << name;
    EXPECT_EQ(a, b) << name;
  }
}

TEST(ReplayObstacle, FlowsWhoseOrderFollowsThreadsNameThemselvesThroughWrappers) {
  auto runner = std::make_unique<BatchData>(
      std::make_unique<MultiThreadRunner>([](std::size_t i) { return shuffled(40, i); },
                                          MultiThreadRunnerOptions{.num_threads = 2}),
      4);
  EXPECT_EQ(runner->replay_obstacle(), "MultiThreadRunner: 2 threads interleave their copies in the order the threads run");

  std::vector<DataFlowPtr> flows;
  flows.push_back(range_flow(5));
  flows.push_back(std::make_unique<MultiThreadMapData>(range_flow(5), jitter,
                                                       MultiThreadMapOptions{.num_threads = 3, .ordered = false}));
  ConcatData concat(std::move(flows));
  EXPECT_EQ(concat.replay_obstacle(),
            "MultiThreadMapData: unordered, 3 threads yield datapoints in the order they finish them");

  MultiThreadBatchData batches(range_flow(9), 2, jitter, MultiThreadBatchOptions{.num_threads = 2, .ordered = false});
  EXPECT_EQ(batches.replay_obstacle(), "MultiThreadBatchData: unordered, 2 threads fill batches in the order they finish them");

  // One thread has no one to race: unordered is ordered.
  MultiThreadMapData alone(range_flow(5), jitter, MultiThreadMapOptions{.num_threads = 1, .ordered = false});
  EXPECT_EQ(alone.replay_obstacle(), "");
}

}  // namespace
}  // namespace vkp::dataflow::test
