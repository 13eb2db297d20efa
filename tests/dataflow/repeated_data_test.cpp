// RepeatedData, RepeatedDataPoint, FixedSizeData.
#include "dataflow/repeated_data.h"

#include <gtest/gtest.h>

#include "test_flows.h"
#include "dataflow/fixed_size_data.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(RepeatedData, RepeatsWholeEpochsNTimes) {
  RepeatedData df(range_flow(3), 2);
  EXPECT_EQ(df.size(), 6u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 2, 0, 1, 2}));
}

TEST(RepeatedData, ZeroTimesIsEmpty) {
  RepeatedData df(range_flow(3), 0);
  EXPECT_EQ(df.size(), 0u);
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
}

TEST(RepeatedData, ForeverHasUnknownSizeAndKeepsGoing) {
  RepeatedData df(range_flow(3), std::nullopt);
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  std::vector<int> seen;
  for (int i = 0; i < 10; ++i) seen.push_back(value_of(df.next()->at(0)));
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 0, 1, 2, 0, 1, 2, 0}));
}

TEST(RepeatedData, ForeverOverAnEmptyFlowEndsInsteadOfSpinning) {
  RepeatedData df(range_flow(0), std::nullopt);
  df.reset_state();
  EXPECT_FALSE(df.next());
}

TEST(RepeatedData, UnknownInnerSizeGivesUnknownSize) {
  RepeatedData df(unsized_range_flow(2), 3);
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 0, 1, 0, 1}));
}

TEST(RepeatedDataPoint, RepeatsEachDatapointInPlace) {
  RepeatedDataPoint df(range_flow(3), 2);
  EXPECT_EQ(df.size(), 6u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 0, 1, 1, 2, 2}));
  EXPECT_THROW(RepeatedDataPoint(range_flow(1), 0), Error);
}

TEST(RepeatedDataPoint, EmptyInputStaysEmpty) {
  RepeatedDataPoint df(unsized_range_flow(0), 3);
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
}

TEST(FixedSizeData, KeepsStateAcrossEpochsAndWrapsAround) {
  FixedSizeData df(range_flow(5), 3);
  EXPECT_EQ(df.size(), 3u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{3, 4, 0}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{1, 2, 3}));
}

TEST(FixedSizeData, WithoutKeepStateRestartsEachEpoch) {
  FixedSizeData df(range_flow(2), 5, false);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 0, 1, 0}));
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 1, 0, 1, 0}));
}

TEST(FixedSizeData, EmptyInputIsAnErrorNotAHang) {
  FixedSizeData df(unsized_range_flow(0), 2);
  df.reset_state();
  const std::string message = error_message([&] { df.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("yielded an empty epoch"), std::string::npos) << message;
  FixedSizeData zero(range_flow(0), 0);
  zero.reset_state();
  EXPECT_FALSE(zero.next());
}

}  // namespace
}  // namespace vkp::dataflow
