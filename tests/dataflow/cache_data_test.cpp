#include "dataflow/cache_data.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// range_flow(n) that counts how many datapoints were read from it.
DataFlowPtr counted_flow(int n, int& reads) {
  return std::make_unique<DataFromGenerator>(
      [n, &reads] {
        return DataFromGenerator::Generator([n, &reads, i = 0]() mutable -> std::optional<Datapoint> {
          if (i == n) return std::nullopt;
          ++reads;
          return Datapoint{scalar(i++)};
        });
      },
      n);
}

TEST(CacheData, ReadsTheFlowOnceAndServesLaterEpochsFromMemory) {
  int reads = 0;
  CacheData df(counted_flow(5, reads));
  df.reset_state();
  EXPECT_EQ(epoch_values(df), iota_values(5));
  EXPECT_EQ(epoch_values(df), iota_values(5));
  EXPECT_EQ(epoch_values(df), iota_values(5));
  EXPECT_EQ(reads, 5);
  EXPECT_EQ(df.size(), 5u);
}

TEST(CacheData, AnAbandonedFirstEpochIsReadAgain) {
  int reads = 0;
  CacheData df(counted_flow(4, reads));
  df.reset_state();
  df.next();
  df.next();
  EXPECT_EQ(epoch_values(df), iota_values(4));
  EXPECT_EQ(epoch_values(df), iota_values(4));
  EXPECT_EQ(reads, 6);
}

TEST(CacheData, ShufflesCachedEpochsReproducibly) {
  int reads_a = 0, reads_b = 0;
  CacheData a(counted_flow(30, reads_a), true, 4), b(counted_flow(30, reads_b), true, 4);
  a.reset_state();
  b.reset_state();
  EXPECT_EQ(epoch_values(a), iota_values(30));  // the first epoch comes in the flow's order
  epoch_values(b);
  std::vector<int> second = epoch_values(a);
  EXPECT_EQ(second, epoch_values(b));
  EXPECT_NE(second, iota_values(30));
  std::sort(second.begin(), second.end());
  EXPECT_EQ(second, iota_values(30));
}

TEST(CacheData, EmptyInputCachesNothing) {
  CacheData df(unsized_range_flow(0));
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
  EXPECT_TRUE(epoch_values(df).empty());
  EXPECT_EQ(df.size(), 0u);
}

}  // namespace
}  // namespace vkp::dataflow
