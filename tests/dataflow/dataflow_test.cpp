// The DataFlow lifecycle and the sources: DataFromList, DataFromGenerator, FakeData; and
// ProxyDataFlow, the base of a flow that reads one other.
#include "dataflow/dataflow.h"

#include <gtest/gtest.h>

#include <set>

#include "dataflow/fake_data.h"
#include "dataflow/proxy_data.h"
#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(DataFlow, ReadingBeforeResetStateIsAClearError) {
  DataFlowPtr df = range_flow(3);
  const std::string message = error_message([&] { df->next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("DataFromList: next() before reset_state()"), std::string::npos) << message;
  EXPECT_THROW(df->epoch(), Error);
  EXPECT_THROW(df->start_epoch(), Error);
}

TEST(DataFlow, ResetStateTwiceIsAnError) {
  DataFlowPtr df = range_flow(3);
  df->reset_state();
  const std::string message = error_message([&] { df->reset_state(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("reset_state() was called twice"), std::string::npos) << message;
}

TEST(DataFlow, EpochRangeYieldsOneEpochAndCanBeRepeated) {
  DataFlowPtr df = range_flow(4);
  df->reset_state();
  EXPECT_EQ(epoch_values(*df), iota_values(4));
  EXPECT_EQ(epoch_values(*df), iota_values(4));
}

TEST(DataFlow, NextStartsTheFirstEpochAndStaysEndedUntilStartEpoch) {
  DataFlowPtr df = range_flow(2);
  df->reset_state();
  EXPECT_EQ(value_of(df->next()->at(0)), 0);
  EXPECT_EQ(value_of(df->next()->at(0)), 1);
  EXPECT_FALSE(df->next());
  EXPECT_FALSE(df->next());
  df->start_epoch();
  EXPECT_EQ(value_of(df->next()->at(0)), 0);
}

TEST(DataFlow, StartEpochMidwayAbandonsTheRest) {
  DataFlowPtr df = range_flow(5);
  df->reset_state();
  df->next();
  df->next();
  EXPECT_EQ(epoch_values(*df), iota_values(5));
}

TEST(DataFromList, ShufflesEveryEpochReproduciblyFromTheSeed) {
  std::vector<Datapoint> list;
  for (int i = 0; i < 50; ++i) list.push_back({scalar(i)});
  DataFromList a(list, true, 7), b(list, true, 7), c(list, true, 8);
  a.reset_state();
  b.reset_state();
  c.reset_state();
  const std::vector<int> a1 = epoch_values(a), a2 = epoch_values(a);
  EXPECT_EQ(a1, epoch_values(b));
  EXPECT_EQ(a2, epoch_values(b));
  EXPECT_NE(a1, a2);
  EXPECT_NE(a1, epoch_values(c));
  std::vector<int> sorted = a1;
  std::sort(sorted.begin(), sorted.end());
  EXPECT_EQ(sorted, iota_values(50));
  EXPECT_EQ(a.size(), 50u);
}

TEST(DataFromList, EmptyListGivesEmptyEpochs) {
  DataFromList df({}, true);
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
  EXPECT_EQ(df.size(), 0u);
}

TEST(DataFromGenerator, CallsTheFactoryOncePerEpoch) {
  int epochs = 0;
  DataFromGenerator df([&epochs] {
    ++epochs;
    return DataFromGenerator::Generator([i = 0, e = epochs]() mutable -> std::optional<Datapoint> {
      if (i == 3) return std::nullopt;
      return Datapoint{scalar(10 * e + i++)};
    });
  });
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{10, 11, 12}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{20, 21, 22}));
}

TEST(FakeData, GivesShapesDtypesAndValuesInTheDomain) {
  FakeData df({Shape{2, 3}, Shape{}}, {.size = 20, .dtypes = {DType::f32, DType::i32}, .low = 2, .high = 5});
  df.reset_state();
  std::set<int> labels;
  std::size_t count = 0;
  for (const Datapoint& dp : df.epoch()) {
    ++count;
    ASSERT_EQ(dp.size(), 2u);
    EXPECT_EQ(describe(dp[0]), "f32[2, 3]");
    EXPECT_EQ(describe(dp[1]), "i32[]");
    for (float v : dp[0].data<float>()) EXPECT_TRUE(v >= 2 && v < 5) << v;
    labels.insert(value_of(dp[1]));
  }
  EXPECT_EQ(count, 20u);
  EXPECT_EQ(labels, (std::set<int>{2, 3, 4}));
}

TEST(FakeData, IsReproducibleFromItsSeed) {
  const auto first_values = [](std::uint64_t seed) {
    FakeData df({Shape{4}}, {.size = 3, .seed = seed});
    df.reset_state();
    std::vector<float> v;
    for (const Datapoint& dp : df.epoch()) v.insert(v.end(), dp[0].data<float>().begin(), dp[0].data<float>().end());
    return v;
  };
  EXPECT_EQ(first_values(1), first_values(1));
  EXPECT_NE(first_values(1), first_values(2));
}

TEST(FakeData, NonRandomRepeatsOneDatapoint) {
  FakeData df({Shape{5}}, {.size = 3, .dtypes = {DType::u8}, .low = 0, .high = 256, .random = false});
  df.reset_state();
  std::vector<Datapoint> all;
  for (Datapoint& dp : df.epoch()) all.push_back(std::move(dp));
  ASSERT_EQ(all.size(), 3u);
  EXPECT_TRUE(std::equal(all[0][0].data<std::uint8_t>().begin(), all[0][0].data<std::uint8_t>().end(),
                         all[2][0].data<std::uint8_t>().begin()));
}

TEST(FakeData, RejectsAnIntegerDomainWithoutIntegers) {
  const std::string message = error_message(
      [] { FakeData({Shape{1}}, {.dtypes = {DType::i32}, .low = 0.2, .high = 0.7}); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("no i32 value lies in"), std::string::npos) << message;
}

// Forwards everything unchanged; a subclass that overrides on_next alone keeps the
// size, the lifecycle and the pipeline walk (inputs, replay) of the flow it reads.
TEST(ProxyDataFlow, ForwardsUntilASubclassChangesWhatPasses) {
  ProxyDataFlow plain(range_flow(4, 10));
  EXPECT_EQ(plain.size(), 4u);
  plain.reset_state();
  EXPECT_EQ(epoch_values(plain), (std::vector<int>{10, 11, 12, 13}));
  EXPECT_EQ(epoch_values(plain), (std::vector<int>{10, 11, 12, 13})) << "a second epoch";
  ASSERT_EQ(plain.inputs().size(), 1u);

  class Negate : public ProxyDataFlow {
   public:
    using ProxyDataFlow::ProxyDataFlow;

   protected:
    std::optional<Datapoint> on_next() override {
      std::optional<Datapoint> dp = df().next();
      if (dp) (*dp)[0] = scalar(-value_of((*dp)[0]));
      return dp;
    }
  };
  Negate negate(range_flow(3, 1));
  EXPECT_EQ(negate.size(), 3u);
  EXPECT_THROW(negate.next(), Error) << "the lifecycle is checked as for any flow";
  negate.reset_state();
  EXPECT_EQ(epoch_values(negate), (std::vector<int>{-1, -2, -3}));
  EXPECT_EQ(negate.replay_obstacle(), "");
  EXPECT_THROW(ProxyDataFlow(nullptr), Error);
}

}  // namespace
}  // namespace vkp::dataflow
