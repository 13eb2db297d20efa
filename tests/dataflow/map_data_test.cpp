// MapData, MapDataComponent, SelectComponent.
#include "dataflow/map_data.h"

#include <gtest/gtest.h>

#include "test_flows.h"
#include "dataflow/select_component.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(MapData, MapsAndDropsWhenTheFunctionReturnsNothing) {
  MapData df(range_flow(6), [](Datapoint dp) -> std::optional<Datapoint> {
    const int v = value_of(dp[0]);
    if (v % 2) return std::nullopt;
    return Datapoint{scalar(v * 10)};
  });
  EXPECT_EQ(df.size(), 6u);  // an upper bound, as tensorpack reports it
  df.reset_state();
  EXPECT_EQ(epoch_values(df), (std::vector<int>{0, 20, 40}));
}

TEST(MapData, DroppingEverythingGivesAnEmptyEpoch) {
  MapData df(range_flow(4), [](Datapoint) -> std::optional<Datapoint> { return std::nullopt; });
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
  MapData empty(range_flow(0), [](Datapoint dp) -> std::optional<Datapoint> { return dp; });
  empty.reset_state();
  EXPECT_TRUE(epoch_values(empty).empty());
}

TEST(MapDataComponent, ReplacesOneComponentAndMayDrop) {
  std::vector<Datapoint> list;
  for (int i = 0; i < 4; ++i) list.push_back({scalar(i), scalar(100 + i)});
  MapDataComponent df(
      std::make_unique<DataFromList>(std::move(list), false),
      [](Array a) -> std::optional<Array> {
        if (value_of(a) == 102) return std::nullopt;
        return scalar(-value_of(a));
      },
      1);
  df.reset_state();
  EXPECT_EQ(epoch_values(df, 0), (std::vector<int>{0, 1, 3}));
  EXPECT_EQ(epoch_values(df, 1), (std::vector<int>{-100, -101, -103}));
}

TEST(MapDataComponent, OutOfRangeIndexNamesTheCounts) {
  MapDataComponent df(range_flow(2), [](Array a) -> std::optional<Array> { return a; }, 3);
  df.reset_state();
  const std::string message = error_message([&] { df.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("MapDataComponent: component 3 asked for, but the datapoint has 1 components"),
            std::string::npos)
      << message;
}

TEST(SelectComponent, ReordersAndRepeatsComponents) {
  std::vector<Datapoint> list = {{scalar(1), scalar(2), scalar(3)}};
  SelectComponent df(std::make_unique<DataFromList>(std::move(list), false), {2, 0, 2});
  df.reset_state();
  const std::optional<Datapoint> dp = df.next();
  ASSERT_TRUE(dp);
  ASSERT_EQ(dp->size(), 3u);
  EXPECT_EQ(value_of((*dp)[0]), 3);
  EXPECT_EQ(value_of((*dp)[1]), 1);
  EXPECT_EQ(value_of((*dp)[2]), 3);
  EXPECT_EQ(df.size(), 1u);
}

TEST(SelectComponent, EmptyAndUnsizedInputs) {
  SelectComponent empty(range_flow(0), {0});
  empty.reset_state();
  EXPECT_FALSE(empty.next());
  SelectComponent unsized(unsized_range_flow(3), {0, 0});
  EXPECT_FALSE(unsized.size().has_value());
  unsized.reset_state();
  EXPECT_EQ(epoch_values(unsized, 1), iota_values(3));
}

TEST(SelectComponent, OutOfRangeIsAnError) {
  SelectComponent df(range_flow(1), {1});
  df.reset_state();
  EXPECT_THROW(df.next(), Error);
}

}  // namespace
}  // namespace vkp::dataflow
