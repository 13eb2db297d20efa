// Flows made of several flows: ConcatData, JoinData, RandomChooseData, RandomMixData.
#include <gtest/gtest.h>

#include <algorithm>

#include "test_flows.h"
#include "dataflow/concat_data.h"
#include "dataflow/join_data.h"
#include "dataflow/random_choose_data.h"
#include "dataflow/random_mix_data.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

template <class... Flows>
std::vector<DataFlowPtr> flows(Flows... f) {
  std::vector<DataFlowPtr> v;
  (v.push_back(std::move(f)), ...);
  return v;
}

TEST(ConcatData, ChainsEpochsAndSkipsEmptyFlows) {
  ConcatData df(flows(range_flow(2), range_flow(0), range_flow(3, 10)));
  EXPECT_EQ(df.size(), 5u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 10, 11, 12}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 10, 11, 12}));
}

TEST(ConcatData, NoFlowsIsEmptyAndUnknownSizesAreUnknown) {
  ConcatData none({});
  EXPECT_EQ(none.size(), 0u);
  none.reset_state();
  EXPECT_FALSE(none.next());
  ConcatData unknown(flows(range_flow(2), unsized_range_flow(2)));
  EXPECT_FALSE(unknown.size().has_value());
  unknown.reset_state();
  EXPECT_EQ(epoch_values(unknown), (std::vector<int>{0, 1, 0, 1}));
}

TEST(JoinData, JoinsComponentsAndStopsAtTheShortest) {
  JoinData df(flows(range_flow(4), range_flow(3, 100)));
  EXPECT_EQ(df.size(), 3u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df, 0), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(epoch_values(df, 1), (std::vector<int>{100, 101, 102}));
}

TEST(JoinData, EmptyFlowEndsAtOnceAndNoFlowsIsAnError) {
  JoinData df(flows(range_flow(3), unsized_range_flow(0)));
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  EXPECT_FALSE(df.next());
  EXPECT_THROW(JoinData({}), Error);
}

TEST(RandomChooseData, FollowsTheWeightsAndEndsWhenAPickedFlowEnds) {
  RandomChooseData df(flows(range_flow(1000), range_flow(1000, 5000)), {3, 1}, 11);
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  int from_first = 0;
  for (int i = 0; i < 400; ++i) from_first += value_of(df.next()->at(0)) < 5000;
  EXPECT_GT(from_first, 260);  // 300 expected
  EXPECT_LT(from_first, 340);
  RandomChooseData ending(flows(range_flow(2), range_flow(1000, 100)), {}, 1);
  ending.reset_state();
  const std::vector<int> values = epoch_values(ending);
  EXPECT_LT(values.size(), 1002u);
  EXPECT_LE(std::count_if(values.begin(), values.end(), [](int v) { return v < 100; }), 2);
}

TEST(RandomChooseData, ZeroWeightFlowIsNeverPicked) {
  RandomChooseData df(flows(range_flow(100), range_flow(100, 1000)), {0, 1}, 3);
  df.reset_state();
  for (int v : epoch_values(df)) EXPECT_GE(v, 1000);
  EXPECT_THROW(RandomChooseData(flows(range_flow(1)), {0}), Error);
}

TEST(RandomMixData, YieldsEveryDatapointOnceKeepingEachFlowsOrder) {
  RandomMixData df(flows(range_flow(20), range_flow(10, 100)), 5);
  EXPECT_EQ(df.size(), 30u);
  df.reset_state();
  const std::vector<int> values = epoch_values(df);
  ASSERT_EQ(values.size(), 30u);
  std::vector<int> low, high;
  for (int v : values) (v < 100 ? low : high).push_back(v);
  EXPECT_EQ(low, iota_values(20));
  EXPECT_EQ(high, iota_values(10, 100));
  EXPECT_FALSE(std::is_sorted(values.begin(), values.end()));
  RandomMixData again(flows(range_flow(20), range_flow(10, 100)), 5);
  again.reset_state();
  EXPECT_EQ(epoch_values(again), values);
}

TEST(RandomMixData, NeedsKnownSizesAndReportsAShortFlow) {
  const std::string message = error_message([] { RandomMixData(flows(range_flow(2), unsized_range_flow(2))); },
                                            ErrorCode::invalid_argument);
  EXPECT_NE(message.find("flow 1 does not know its size"), std::string::npos) << message;
  // A generator that claims 5 datapoints but gives 2.
  auto liar = std::make_unique<DataFromGenerator>(
      [] {
        return DataFromGenerator::Generator([i = 0]() mutable -> std::optional<Datapoint> {
          if (i == 2) return std::nullopt;
          return Datapoint{scalar(i++)};
        });
      },
      5);
  RandomMixData df(flows(std::move(liar)));
  df.reset_state();
  const std::string short_message = error_message([&] { epoch_values(df); }, ErrorCode::bad_data);
  EXPECT_NE(short_message.find("flow 0 ended after 2 datapoints, but its size() is 5"), std::string::npos)
      << short_message;
}

}  // namespace
}  // namespace vkp::dataflow
