// TestDataSpeed and PrintData.
#include <gtest/gtest.h>

#include <cstdio>

#include "test_flows.h"
#include "core/log.h"
#include "dataflow/fake_data.h"
#include "dataflow/print_data.h"
#include "dataflow/test_data_speed.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(TestDataSpeed, CountsDatapointsAcrossEpochsAndDrawsAProgressBar) {
  DataFlowPtr df = range_flow(7);
  std::FILE* bar = std::tmpfile();
  ASSERT_NE(bar, nullptr);
  const DataSpeed speed = TestDataSpeed(*df, 30, 5, bar).run();
  EXPECT_EQ(speed.datapoints, 30u);
  EXPECT_GT(speed.seconds, 0);
  EXPECT_GT(speed.per_second(), 0);
  std::rewind(bar);
  char text[256] = {};
  const std::size_t n = std::fread(text, 1, sizeof text - 1, bar);
  std::fclose(bar);
  EXPECT_NE(std::string(text, n).find("] 30/30 "), std::string::npos) << text;
}

TEST(TestDataSpeed, AnEmptyFlowEndsTheTest) {
  DataFlowPtr df = range_flow(0);
  const DataSpeed speed = TestDataSpeed(*df, 100, 0, nullptr).run();
  EXPECT_EQ(speed.datapoints, 0u);
}

TEST(PrintData, LogsShapesDtypesAndRangesOfTheFirstDatapoints) {
  std::vector<std::string> lines;
  const LogLevel level = logger().level();
  logger().set_level(LogLevel::info);  // whatever VKPACK_LOG_LEVEL says: the test reads info lines
  const int sink = logger().add_sink([&lines](LogLevel, std::string_view line) { lines.emplace_back(line); });
  std::vector<Datapoint> list;
  for (int i = 0; i < 5; ++i)
    list.push_back({Array::from<float>(Shape{2, 2}, std::vector<float>{-1.5f, 0, 2, float(i)}), scalar(i)});
  PrintData df(std::make_unique<DataFromList>(std::move(list), false), 2, "train data");
  df.reset_state();
  EXPECT_EQ(epoch_values(df, 1), iota_values(5));  // passes everything through
  logger().remove_sink(sink);
  logger().set_level(level);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_NE(lines[0].find("train data: datapoint 0 of 2 components\n0: f32[2, 2] in [-1.5, 2]\n1: i32[] in [0, 0]"),
            std::string::npos)
      << lines[0];
  EXPECT_NE(lines[1].find("1: i32[] in [1, 1]"), std::string::npos) << lines[1];
}

TEST(PrintData, DescribesEmptyAndF16Components) {
  FakeData df({Shape{0}, Shape{3}}, {.size = 1, .dtypes = {DType::f32, DType::f16}, .low = 0.5, .high = 0.75});
  df.reset_state();
  const std::string text = describe_datapoint(*df.next());
  EXPECT_NE(text.find("0: f32[0] (empty)"), std::string::npos) << text;
  EXPECT_NE(text.find("1: f16[3] in [0."), std::string::npos) << text;
}

}  // namespace
}  // namespace vkp::dataflow
