// MultiThreadMapData and PrefetchData: results, order, epochs, bounded buffering,
// exceptions from workers, and stopping early.
#include "dataflow/multi_thread_map_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>

#include "test_flows.h"
#include "dataflow/prefetch_data.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// Doubles, dropping multiples of 7.
std::optional<Datapoint> double_or_drop(Datapoint dp) {
  const int v = value_of(dp[0]);
  if (v % 7 == 0) return std::nullopt;
  return Datapoint{scalar(2 * v)};
}

// Waits until `counter` reaches `value` (or 10 s pass, for a loaded machine), then a
// little longer, so that a counter that would overshoot has the time to.
int settle(const std::atomic<int>& counter, int value) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (counter.load() < value && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  return counter.load();
}

std::vector<int> expected_doubles(int n) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i)
    if (i % 7) v.push_back(2 * i);
  return v;
}

// range_flow(n) as a generator that counts the datapoints taken from it.
DataFlowPtr counted_flow(int n, std::atomic<int>& taken) {
  return std::make_unique<DataFromGenerator>(
      [n, &taken] {
        return DataFromGenerator::Generator([n, &taken, i = 0]() mutable -> std::optional<Datapoint> {
          if (i == n) return std::nullopt;
          ++taken;
          return Datapoint{scalar(i++)};
        });
      },
      n);
}

TEST(MultiThreadMapData, OrderedGivesTheSequentialResultForAnyThreadCount) {
  for (std::size_t threads : {1, 2, 4}) {
    for (std::size_t chunk : {1, 5, 64}) {
      MultiThreadMapData df(range_flow(500), double_or_drop,
                            {.num_threads = threads, .buffer_size = 20, .ordered = true, .chunk = chunk});
      EXPECT_EQ(df.size(), 500u);
      df.reset_state();
      EXPECT_EQ(epoch_values(df), expected_doubles(500)) << threads << " threads, chunk " << chunk;
      EXPECT_EQ(epoch_values(df), expected_doubles(500)) << "second epoch";
    }
  }
}

TEST(MultiThreadMapData, UnorderedGivesTheSameDatapoints) {
  MultiThreadMapData df(range_flow(1000), double_or_drop, {.num_threads = 3, .buffer_size = 16, .ordered = false, .chunk = 2});
  df.reset_state();
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int> values = epoch_values(df);
    std::sort(values.begin(), values.end());
    EXPECT_EQ(values, expected_doubles(1000));
  }
}

TEST(MultiThreadMapData, EmptyAndUnknownSizeInputs) {
  MultiThreadMapData empty(range_flow(0), double_or_drop);
  empty.reset_state();
  EXPECT_TRUE(epoch_values(empty).empty());
  EXPECT_TRUE(epoch_values(empty).empty());
  MultiThreadMapData unsized(unsized_range_flow(30), double_or_drop, {.num_threads = 2, .chunk = 4});
  EXPECT_FALSE(unsized.size().has_value());
  unsized.reset_state();
  EXPECT_EQ(epoch_values(unsized), expected_doubles(30));
}

TEST(MultiThreadMapData, SeededRandomMapIsTheSameForAnyThreadCount) {
  const auto run = [](std::size_t threads) {
    MultiThreadMapData df(
        range_flow(300),
        RandomMapFunction([](Datapoint dp, Rng& rng) -> std::optional<Datapoint> {
          return Datapoint{scalar(value_of(dp[0]) * 1000 + static_cast<int>(rng.below(1000)))};
        }),
        {.num_threads = threads, .buffer_size = 32, .ordered = true, .chunk = 3, .seed = 42});
    df.reset_state();
    std::vector<int> both = epoch_values(df);
    const std::vector<int> second = epoch_values(df);
    both.insert(both.end(), second.begin(), second.end());
    return both;
  };
  const std::vector<int> one = run(1);
  EXPECT_EQ(one, run(3));
  // The second epoch draws other numbers: datapoint k counts on across epochs.
  EXPECT_NE(std::vector<int>(one.begin(), one.begin() + 300), std::vector<int>(one.begin() + 300, one.end()));
}

TEST(MultiThreadMapData, TheBufferBoundsHowFarWorkersReadAhead) {
  std::atomic<int> taken{0};
  MultiThreadMapData df(counted_flow(10000, taken), double_or_drop,
                        {.num_threads = 3, .buffer_size = 8, .ordered = true, .chunk = 2});
  df.reset_state();
  ASSERT_TRUE(df.next());
  // The reader holds one chunk (2); workers take exactly buffer_size more, then wait.
  EXPECT_EQ(settle(taken, 10), 10);
}

TEST(MultiThreadMapData, AWorkerExceptionReachesTheReaderWithItsMessage) {
  MultiThreadMapData df(
      range_flow(200),
      [](Datapoint dp) -> std::optional<Datapoint> {
        if (value_of(dp[0]) == 77) throw std::runtime_error("cannot map datapoint 77");
        return dp;
      },
      {.num_threads = 2, .buffer_size = 10, .chunk = 3});
  df.reset_state();
  try {
    epoch_values(df);
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot map datapoint 77");
  }
  EXPECT_THROW(df.next(), std::runtime_error);  // the epoch stays failed
}

TEST(MultiThreadMapData, ASourceExceptionReachesTheReader) {
  auto failing = std::make_unique<DataFromGenerator>([] {
    return DataFromGenerator::Generator([i = 0]() mutable -> std::optional<Datapoint> {
      if (i == 13) throw Error(ErrorCode::bad_data, "source broke at 13");
      return Datapoint{scalar(i++)};
    });
  });
  MultiThreadMapData df(std::move(failing), double_or_drop, {.num_threads = 2, .chunk = 4});
  df.reset_state();
  const std::string message = error_message([&] { epoch_values(df); }, ErrorCode::bad_data);
  EXPECT_EQ(message, "source broke at 13");
}

TEST(MultiThreadMapData, StartingAnEpochMidwayGivesAWholeCleanEpoch) {
  MultiThreadMapData df(range_flow(300), double_or_drop, {.num_threads = 3, .buffer_size = 30, .chunk = 4});
  df.reset_state();
  for (int i = 0; i < 17; ++i) df.next();
  EXPECT_EQ(epoch_values(df), expected_doubles(300));
}

TEST(MultiThreadMapData, DestroyingMidEpochJoinsEveryWorker) {
  std::atomic<int> mapped{0};
  {
    MultiThreadMapData df(
        range_flow(100000),
        [&mapped](Datapoint dp) -> std::optional<Datapoint> {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          ++mapped;
          return dp;
        },
        {.num_threads = 4, .buffer_size = 16, .chunk = 2});
    df.reset_state();
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(df.next());
  }
  const int after = mapped.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(mapped.load(), after);  // no worker is left running
  EXPECT_LT(after, 100);
}

TEST(MultiThreadMapData, DestroyingWithoutReadingOrResettingIsFine) {
  MultiThreadMapData never_reset(range_flow(10), double_or_drop);
  MultiThreadMapData never_read(range_flow(10), double_or_drop);
  never_read.reset_state();
}

TEST(PrefetchData, KeepsTheFlowsOrderAndEpochs) {
  PrefetchData df(range_flow(100), 7);
  EXPECT_EQ(df.size(), 100u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df), iota_values(100));
  df.next();
  EXPECT_EQ(epoch_values(df), iota_values(100));
}

TEST(PrefetchData, ReadsAheadOnItsThreadWithinTheBuffer) {
  std::atomic<int> taken{0};
  PrefetchData df(counted_flow(1000, taken), 5);
  df.reset_state();
  ASSERT_TRUE(df.next());
  EXPECT_EQ(settle(taken, 6), 6);  // the one read plus a full buffer
}

TEST(PrefetchData, PassesOnExceptionsAndStopsEarly) {
  auto failing = std::make_unique<DataFromGenerator>([] {
    return DataFromGenerator::Generator([i = 0]() mutable -> std::optional<Datapoint> {
      if (i == 3) throw std::runtime_error("disk gone");
      return Datapoint{scalar(i++)};
    });
  });
  PrefetchData df(std::move(failing), 2);
  df.reset_state();
  EXPECT_EQ(value_of(df.next()->at(0)), 0);
  try {
    while (df.next()) {
    }
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "disk gone");
  }
}

}  // namespace
}  // namespace vkp::dataflow
