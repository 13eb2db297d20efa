#include "dataflow/batch_data.h"

#include <gtest/gtest.h>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// {f32 [2] = {i, -i}, i32 [] = i} for i in [0, n).
DataFlowPtr pairs(int n) {
  std::vector<Datapoint> list;
  for (int i = 0; i < n; ++i)
    list.push_back({Array::from<float>(Shape{2}, std::vector<float>{float(i), float(-i)}), scalar(i)});
  return std::make_unique<DataFromList>(std::move(list), false);
}

TEST(BatchData, StacksComponentsAlongANewLeadingAxis) {
  BatchData df(pairs(6), 3);
  df.reset_state();
  std::vector<Datapoint> batches;
  for (Datapoint& b : df.epoch()) batches.push_back(std::move(b));
  ASSERT_EQ(batches.size(), 2u);
  EXPECT_EQ(describe(batches[1][0]), "f32[3, 2]");
  EXPECT_EQ(describe(batches[1][1]), "i32[3]");
  const std::vector<float> want{3, -3, 4, -4, 5, -5};
  EXPECT_EQ(std::vector<float>(batches[1][0].data<float>().begin(), batches[1][0].data<float>().end()), want);
  EXPECT_EQ(value_of(batches[1][1], 2), 5);
}

TEST(BatchData, DropsTheRemainderUnlessAsked) {
  BatchData dropping(pairs(7), 3), keeping(pairs(7), 3, true);
  EXPECT_EQ(dropping.size(), 2u);
  EXPECT_EQ(keeping.size(), 3u);
  dropping.reset_state();
  keeping.reset_state();
  std::size_t n = 0;
  for (const Datapoint& b : dropping.epoch()) EXPECT_EQ(b[1].numel(), 3) << ++n;
  std::vector<std::int64_t> sizes;
  for (const Datapoint& b : keeping.epoch()) sizes.push_back(b[1].numel());
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{3, 3, 1}));
}

TEST(BatchData, EmptyInputAndInputShorterThanABatch) {
  BatchData empty(pairs(0), 4, true), short_dropped(pairs(3), 4), short_kept(pairs(3), 4, true);
  for (BatchData* df : {&empty, &short_dropped, &short_kept}) df->reset_state();
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_FALSE(empty.next());
  EXPECT_EQ(short_dropped.size(), 0u);
  EXPECT_FALSE(short_dropped.next());
  EXPECT_EQ(short_kept.size(), 1u);
  EXPECT_EQ(short_kept.next()->at(1).numel(), 3);
  EXPECT_FALSE(short_kept.next());
}

TEST(BatchData, SizeIsUnknownWhenTheInputsIs) {
  BatchData df(unsized_range_flow(10), 4, true);
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  std::size_t batches = 0;
  for (const Datapoint& b : df.epoch()) batches += b.size();
  EXPECT_EQ(batches, 3u);
}

TEST(BatchData, ShapeMismatchNamesTheComponent) {
  std::vector<Datapoint> list = {{scalar(0), Array(DType::f32, Shape{2})}, {scalar(1), Array(DType::f32, Shape{3})}};
  BatchData df(std::make_unique<DataFromList>(std::move(list), false), 2);
  df.reset_state();
  const std::string message = error_message([&] { df.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("BatchData: component 1 of datapoint 1 of the batch is f32[3], datapoint 0 has f32[2]"),
            std::string::npos)
      << message;
}

TEST(BatchData, DtypeAndComponentCountMismatchesAreErrors) {
  std::vector<Datapoint> dtypes = {{Array(DType::f32, Shape{2})}, {Array(DType::i32, Shape{2})}};
  BatchData a(std::make_unique<DataFromList>(std::move(dtypes), false), 2);
  a.reset_state();
  EXPECT_NE(error_message([&] { a.next(); }, ErrorCode::invalid_argument).find("is i32[2], datapoint 0 has f32[2]"),
            std::string::npos);
  std::vector<Datapoint> counts = {{scalar(0)}, {scalar(1), scalar(2)}};
  BatchData b(std::make_unique<DataFromList>(std::move(counts), false), 2);
  b.reset_state();
  EXPECT_NE(error_message([&] { b.next(); }, ErrorCode::invalid_argument).find("datapoint 1 of the batch has 2 components"),
            std::string::npos);
}

TEST(BatchData, BatchesMayDifferInShapeFromOneToTheNext) {
  std::vector<Datapoint> list;
  for (std::int64_t n : {2, 2, 3, 3, 3}) list.push_back({Array(DType::f32, Shape{n})});
  BatchData df(std::make_unique<DataFromList>(std::move(list), false), 2, true);
  df.reset_state();
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<std::string> shapes;
    for (const Datapoint& b : df.epoch()) shapes.push_back(describe(b[0]));
    EXPECT_EQ(shapes, (std::vector<std::string>{"f32[2, 2]", "f32[2, 3]", "f32[1, 3]"}));
  }
}

TEST(BatchStacker, StacksRowsOfBatchesAndChecksThem) {
  const Datapoint batch = {Array::from<std::int32_t>(Shape{3, 2}, std::vector<std::int32_t>{0, 1, 2, 3, 4, 5}),
                           Array::from<float>(Shape{3}, std::vector<float>{10, 11, 12})};
  BatchStacker stacker(4, "test");
  stacker.add_rows(batch, 1, 3);
  stacker.add({Array::from<std::int32_t>(Shape{2}, std::vector<std::int32_t>{6, 7}), Array::from<float>(Shape{}, std::vector<float>{13})});
  EXPECT_EQ(stacker.rows(), 3u);
  EXPECT_FALSE(stacker.full());
  const std::string message =
      error_message([&] { stacker.add({Array(DType::i32, Shape{3}), Array(DType::f32, Shape{})}); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("test: component 0 of datapoint 3 of the batch is i32[3], datapoint 0 has i32[2]"), std::string::npos)
      << message;
  EXPECT_EQ(stacker.rows(), 3u);  // the bad row was not added
  stacker.add_rows(batch, 0, 1);
  ASSERT_TRUE(stacker.full());
  const Datapoint out = stacker.take();
  EXPECT_EQ(describe(out[0]), "i32[4, 2]");
  const std::vector<std::int32_t> want{2, 3, 4, 5, 6, 7, 0, 1};
  EXPECT_EQ(std::vector<std::int32_t>(out[0].data<std::int32_t>().begin(), out[0].data<std::int32_t>().end()), want);
  EXPECT_EQ(out[1].data<float>()[3], 10.0f);
  EXPECT_EQ(stacker.rows(), 0u);
}

TEST(BatchStacker, AHugeCapacityAllocatesAsRowsCome) {
  BatchStacker stacker(std::size_t{1} << 40, "test");
  for (int i = 0; i < 1000; ++i) stacker.add({scalar(i)});
  const Datapoint out = stacker.take();
  ASSERT_EQ(out[0].numel(), 1000);
  EXPECT_EQ(value_of(out[0], 999), 999);
}

TEST(BatchData, RejectsBatchSizeZero) {
  EXPECT_THROW(BatchData(pairs(3), 0), Error);
}

}  // namespace
}  // namespace vkp::dataflow
