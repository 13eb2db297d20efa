#include "dataflow/multi_thread_runner.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <map>
#include <stdexcept>
#include <thread>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

TEST(MultiThreadRunner, EpochsHaveTheCopysSizeAndTakeFromEveryCopy) {
  MultiThreadRunner df([](std::size_t i) { return range_flow(50, static_cast<int>(1000 * i)); },
                       {.num_threads = 3, .queue_size = 16, .chunk = 4});
  EXPECT_EQ(df.size(), 50u);
  df.reset_state();
  std::map<int, std::vector<int>> by_copy;
  // Which copies fill the queue first is up to the scheduler; all do, sooner or later.
  for (int epoch = 0; epoch < 6 || (by_copy.size() < 3 && epoch < 100000); ++epoch) {
    const std::vector<int> values = epoch_values(df);
    ASSERT_EQ(values.size(), 50u);
    for (int v : values) by_copy[v / 1000].push_back(v % 1000);
  }
  EXPECT_EQ(by_copy.size(), 3u);
  // Each copy's datapoints come in that copy's order, epoch after epoch.
  for (const auto& [copy, seq] : by_copy)
    for (std::size_t k = 0; k < seq.size(); ++k) EXPECT_EQ(seq[k], static_cast<int>(k % 50)) << copy;
}

TEST(MultiThreadRunner, UnknownSizeMakesAnEndlessStream) {
  MultiThreadRunner df([](std::size_t) { return unsized_range_flow(3); }, {.num_threads = 2, .queue_size = 4});
  EXPECT_FALSE(df.size().has_value());
  df.reset_state();
  for (int i = 0; i < 500; ++i) ASSERT_TRUE(df.next()) << i;
}

TEST(MultiThreadRunner, EmptyCopiesGiveEmptyEpochsWithoutHanging) {
  MultiThreadRunner df([](std::size_t) { return unsized_range_flow(0); }, {.num_threads = 3});
  df.reset_state();
  EXPECT_TRUE(epoch_values(df).empty());
  EXPECT_TRUE(epoch_values(df).empty());
}

TEST(MultiThreadRunner, ACopysExceptionReachesTheReaderWithItsMessage) {
  MultiThreadRunner df(
      [](std::size_t i) -> DataFlowPtr {
        if (i == 0) return unsized_range_flow(1000000);
        return std::make_unique<DataFromGenerator>([] {
          return DataFromGenerator::Generator([n = 0]() mutable -> std::optional<Datapoint> {
            if (n == 20) throw std::runtime_error("copy 1 failed at 20");
            return Datapoint{scalar(n++)};
          });
        });
      },
      {.num_threads = 2, .queue_size = 8, .chunk = 2});
  df.reset_state();
  try {
    for (int i = 0; i < 100000; ++i) df.next();
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "copy 1 failed at 20");
  }
  EXPECT_THROW(df.next(), std::runtime_error);
}

TEST(MultiThreadRunner, AnExceptionInResetStateOfACopyReachesTheReader) {
  MultiThreadRunner df(
      [](std::size_t) -> DataFlowPtr {
        auto inner = range_flow(3);
        inner->reset_state();  // a second reset_state() on the worker thread throws
        return inner;
      },
      {.num_threads = 1});
  df.reset_state();
  const std::string message = error_message([&] { df.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("reset_state() was called twice"), std::string::npos) << message;
}

TEST(MultiThreadRunner, DestroyingWhileProducersWaitOnAFullQueueJoinsThem) {
  std::atomic<int> produced{0};
  {
    MultiThreadRunner df(
        [&produced](std::size_t) {
          return std::make_unique<DataFromGenerator>([&produced] {
            return DataFromGenerator::Generator([&produced]() -> std::optional<Datapoint> {
              ++produced;
              return Datapoint{scalar(1)};
            });
          });
        },
        {.num_threads = 4, .queue_size = 8, .chunk = 2});
    df.reset_state();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(df.next());
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    // Producers are blocked: the queue holds 8, the reader 3 taken of a batch, each copy one batch.
    EXPECT_LT(produced.load(), 8 + 8 + 4 * 3 + 4);
  }
  const int after = produced.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(produced.load(), after);
}

TEST(MultiThreadRunner, DestroyingWhileCopiesAreSlowJoinsThem) {
  MultiThreadRunner df(
      [](std::size_t) {
        return std::make_unique<DataFromGenerator>([] {
          return DataFromGenerator::Generator([]() -> std::optional<Datapoint> {
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
            return Datapoint{scalar(1)};
          });
        });
      },
      {.num_threads = 2, .queue_size = 4, .chunk = 1});
  df.reset_state();
  ASSERT_TRUE(df.next());
}

TEST(MultiThreadRunner, RejectsBadOptions) {
  EXPECT_THROW(MultiThreadRunner([](std::size_t) { return range_flow(1); }, {.num_threads = 0}), Error);
  EXPECT_THROW(MultiThreadRunner([](std::size_t) { return DataFlowPtr(); }, {.num_threads = 1}), Error);
}

}  // namespace
}  // namespace vkp::dataflow
