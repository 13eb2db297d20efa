// BatchDataByShape against batches formed by hand from the same datapoints, and
// DataFromQueue fed by another thread.
#include "dataflow/batch_data_by_shape.h"

#include <gtest/gtest.h>

#include <thread>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// Datapoint i: {f32 image of side 1 + i % 3 holding i, i32 label i}.
DataFlowPtr mixed_sizes(int n) {
  std::vector<Datapoint> list;
  for (int i = 0; i < n; ++i) {
    const std::int64_t side = 1 + i % 3;
    Array image(DType::f32, Shape{side, side});
    for (float& v : image.data<float>()) v = static_cast<float>(i);
    list.push_back({std::move(image), scalar(i)});
  }
  return std::make_unique<DataFromList>(std::move(list), false);
}

// Each batch holds datapoints of one shape, in their order; a shape's batch comes out as
// soon as its batch_size-th datapoint arrives; partial groups are dropped at the end.
TEST(BatchDataByShape, GroupsBySizeInArrivalOrderAndDropsPartialGroups) {
  BatchDataByShape df(mixed_sizes(14), 2, 0);
  df.reset_state();
  EXPECT_FALSE(df.size().has_value());
  // Sides: 0:1 1:2 2:3 3:1 4:2 5:3 6:1 7:2 8:3 9:1 10:2 11:3 12:1 13:2.
  // Batches as groups fill: {0,3} at 3, {1,4} at 4, {2,5} at 5, {6,9} at 9, {7,10} at 10,
  // {8,11} at 11; 12 (side 1) and 13 (side 2) wait alone in their groups: dropped.
  const std::vector<std::vector<int>> want = {{0, 3}, {1, 4}, {2, 5}, {6, 9}, {7, 10}, {8, 11}};
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::vector<int>> got;
    for (const Datapoint& b : df.epoch()) {
      ASSERT_EQ(b[1].numel(), 2);
      const std::int64_t side = b[0].shape()[1];
      EXPECT_EQ(b[0].shape().dims(), (std::vector<std::int64_t>{2, side, side}));
      got.push_back({value_of(b[1], 0), value_of(b[1], 1)});
      for (std::int64_t r = 0; r < 2; ++r)
        EXPECT_EQ(b[0].data<float>()[static_cast<std::size_t>(r * side * side)], static_cast<float>(got.back()[r]));
    }
    EXPECT_EQ(got, want) << "epoch " << epoch;
  }
  BatchDataByShape wrong(mixed_sizes(2), 2, 5);
  wrong.reset_state();
  EXPECT_THROW(wrong.next(), Error);
}

TEST(DataFromQueue, YieldsWhatAnotherThreadPushesUntilTheQueueCloses) {
  auto queue = std::make_shared<BoundedQueue<Datapoint>>(4);
  DataFromQueue df(queue);
  df.reset_state();
  std::thread producer([queue] {
    for (int i = 0; i < 100; ++i) queue->push({scalar(i)});
    queue->close();
  });
  int expected = 0;
  for (const Datapoint& dp : df.epoch()) EXPECT_EQ(value_of(dp[0], 0), expected++);
  producer.join();
  EXPECT_EQ(expected, 100);
  EXPECT_THROW(DataFromQueue(nullptr), Error);
}

}  // namespace
}  // namespace vkp::dataflow
