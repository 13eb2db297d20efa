#include "dataflow/locally_shuffle_data.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(LocallyShuffleData, YieldsAPermutationOfEachEpoch) {
  LocallyShuffleData df(range_flow(100), 10, 3);
  EXPECT_EQ(df.size(), 100u);
  df.reset_state();
  std::vector<int> first = epoch_values(df);
  EXPECT_NE(first, iota_values(100));
  std::vector<int> second = epoch_values(df);
  EXPECT_NE(first, second);
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, iota_values(100));
  EXPECT_EQ(second, iota_values(100));
}

TEST(LocallyShuffleData, StaysLocalToTheBuffer) {
  LocallyShuffleData df(range_flow(200), 8, 1);
  df.reset_state();
  const std::vector<int> values = epoch_values(df);
  // The k-th output was among the first k + 8 inputs.
  for (std::size_t k = 0; k < values.size(); ++k) EXPECT_LT(values[k], static_cast<int>(k) + 8) << k;
}

TEST(LocallyShuffleData, IsReproducibleFromItsSeed) {
  LocallyShuffleData a(range_flow(50), 16, 9), b(range_flow(50), 16, 9), c(range_flow(50), 16, 10);
  a.reset_state();
  b.reset_state();
  c.reset_state();
  const std::vector<int> va = epoch_values(a);
  EXPECT_EQ(va, epoch_values(b));
  EXPECT_NE(va, epoch_values(c));
}

TEST(LocallyShuffleData, ReuseRepeatsEachDatapoint) {
  LocallyShuffleData df(unsized_range_flow(5), 4, 2, 3);
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  std::vector<int> values = epoch_values(df);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, (std::vector<int>{0, 0, 0, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4}));
}

TEST(LocallyShuffleData, EmptyInputAndBufferLargerThanTheEpoch) {
  LocallyShuffleData empty(range_flow(0), 4);
  empty.reset_state();
  EXPECT_TRUE(epoch_values(empty).empty());
  LocallyShuffleData wide(range_flow(3), 100);
  wide.reset_state();
  std::vector<int> values = epoch_values(wide);
  std::sort(values.begin(), values.end());
  EXPECT_EQ(values, iota_values(3));
}

}  // namespace
}  // namespace vkp::dataflow
