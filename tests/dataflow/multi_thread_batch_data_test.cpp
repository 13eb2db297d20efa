// MultiThreadBatchData: the batches of BatchData over MultiThreadMapData, for any thread
// count; unordered batches; edges; bounded buffering; exceptions; stopping early.
#include "dataflow/multi_thread_batch_data.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// {i32 [2] = {v, draw}, i32 [] = v} with a draw from the datapoint's Rng; drops
// multiples of 7 when asked.
RandomMapFunction pair_with_draw(bool drop) {
  return [drop](Datapoint dp, Rng& rng) -> std::optional<Datapoint> {
    const int v = value_of(dp[0]);
    if (drop && v % 7 == 0) return std::nullopt;
    const int draw = static_cast<int>(rng.below(1000));
    return Datapoint{Array::from<std::int32_t>(Shape{2}, std::vector<std::int32_t>{v, draw}), scalar(v)};
  };
}

// Every batch of `epochs` epochs, flattened: per batch its row count, then its values.
std::vector<int> read_batches(DataFlow& df, int epochs) {
  std::vector<int> out;
  for (int e = 0; e < epochs; ++e)
    for (const Datapoint& batch : df.epoch()) {
      EXPECT_EQ(batch.size(), 2u);
      out.push_back(static_cast<int>(batch[1].numel()));
      for (std::int32_t v : batch[0].data<std::int32_t>()) out.push_back(v);
      for (std::int32_t v : batch[1].data<std::int32_t>()) out.push_back(v);
    }
  return out;
}

std::vector<int> reference_batches(int n, std::size_t batch, bool remainder, bool drop, std::uint64_t seed, int epochs) {
  BatchData df(std::make_unique<MultiThreadMapData>(
                   range_flow(n), pair_with_draw(drop),
                   MultiThreadMapOptions{.num_threads = 1, .buffer_size = 8, .ordered = true, .chunk = 3, .seed = seed}),
               batch, remainder);
  df.reset_state();
  return read_batches(df, epochs);
}

TEST(MultiThreadBatchData, OrderedGivesBatchDataOverMultiThreadMapDataForAnyThreadCount) {
  for (bool drop : {false, true})
    for (bool remainder : {false, true})
      for (std::size_t batch : {1, 3, 16})
        for (std::size_t threads : {1, 2, 4})
          for (bool helps : {true, false}) {
            MultiThreadBatchData df(range_flow(100), batch, pair_with_draw(drop),
                                    {.num_threads = threads,
                                     .remainder = remainder,
                                     .buffer_batches = 3,
                                     .seed = 9,
                                     .reader_helps = helps});
            df.reset_state();
            // Three epochs: datapoint k counts on across them, so each draws other numbers.
            EXPECT_EQ(read_batches(df, 3), reference_batches(100, batch, remainder, drop, 9, 3))
                << "drop " << drop << ", remainder " << remainder << ", batch " << batch << ", " << threads
                << " threads, reader helps " << helps;
          }
}

TEST(MultiThreadBatchData, UnorderedGivesTheSameDatapointsInFullBatches) {
  MultiThreadBatchData df(range_flow(1000), 8, pair_with_draw(false),
                          {.num_threads = 3, .remainder = true, .ordered = false, .buffer_batches = 4});
  df.reset_state();
  for (int epoch = 0; epoch < 2; ++epoch) {
    std::vector<int> labels;
    std::size_t short_batches = 0;
    for (const Datapoint& batch : df.epoch()) {
      short_batches += batch[1].numel() != 8;
      for (std::int32_t v : batch[1].data<std::int32_t>()) labels.push_back(v);
    }
    std::sort(labels.begin(), labels.end());
    EXPECT_EQ(labels, iota_values(1000));
    EXPECT_EQ(short_batches, 0u);  // 1000 = 125 x 8
  }
}

TEST(MultiThreadBatchData, DroppedDatapointsAreMadeUpFromLaterBatchesUnordered) {
  MultiThreadBatchData df(range_flow(200), 5, pair_with_draw(true),
                          {.num_threads = 2, .remainder = true, .ordered = false, .buffer_batches = 2});
  df.reset_state();
  std::vector<std::int64_t> sizes;
  std::size_t rows = 0;
  for (const Datapoint& batch : df.epoch()) {
    sizes.push_back(batch[1].numel());
    rows += static_cast<std::size_t>(batch[1].numel());
  }
  EXPECT_EQ(rows, 200u - 29u);  // 0, 7, ..., 196 dropped
  for (std::size_t i = 0; i + 1 < sizes.size(); ++i) EXPECT_EQ(sizes[i], 5) << i;
}

TEST(MultiThreadBatchData, SizeEmptyShortAndUnknownInputs) {
  const auto identity = [](Datapoint dp) -> std::optional<Datapoint> { return dp; };
  MultiThreadBatchData empty(range_flow(0), 4, identity, {.remainder = true});
  MultiThreadBatchData short_dropped(range_flow(3), 4, identity);
  MultiThreadBatchData short_kept(range_flow(3), 4, identity, {.remainder = true});
  MultiThreadBatchData unsized(unsized_range_flow(10), 4, identity, {.remainder = true});
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(short_dropped.size(), 0u);
  EXPECT_EQ(short_kept.size(), 1u);
  EXPECT_FALSE(unsized.size().has_value());
  for (DataFlow* df : std::initializer_list<DataFlow*>{&empty, &short_dropped, &short_kept, &unsized}) df->reset_state();
  EXPECT_FALSE(empty.next());
  EXPECT_FALSE(short_dropped.next());
  EXPECT_EQ(short_kept.next()->at(0).numel(), 3);
  EXPECT_FALSE(short_kept.next());
  std::vector<std::int64_t> sizes;
  for (const Datapoint& b : unsized.epoch()) sizes.push_back(b[0].numel());
  EXPECT_EQ(sizes, (std::vector<std::int64_t>{4, 4, 2}));
}

TEST(MultiThreadBatchData, TheBufferBoundsHowFarWorkersReadAhead) {
  std::atomic<int> taken{0};
  auto counted = std::make_unique<DataFromGenerator>(
      [&taken] {
        return DataFromGenerator::Generator([&taken, i = 0]() mutable -> std::optional<Datapoint> {
          if (i == 10000) return std::nullopt;
          ++taken;
          return Datapoint{scalar(i++)};
        });
      },
      10000);
  MultiThreadBatchData df(std::move(counted), 4, [](Datapoint dp) -> std::optional<Datapoint> { return dp; },
                          {.num_threads = 3, .buffer_batches = 2});
  df.reset_state();
  ASSERT_TRUE(df.next());
  // The reader has its batch (4); workers take exactly two batches more, then wait.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (taken.load() < 12 && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_EQ(taken.load(), 12);
}

TEST(MultiThreadBatchData, AWorkerExceptionReachesTheReaderWithItsMessage) {
  MultiThreadBatchData df(
      range_flow(200), 8,
      [](Datapoint dp) -> std::optional<Datapoint> {
        if (value_of(dp[0]) == 77) throw std::runtime_error("cannot map datapoint 77");
        return dp;
      },
      {.num_threads = 2, .buffer_batches = 2});
  df.reset_state();
  try {
    while (df.next()) {
    }
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "cannot map datapoint 77");
  }
  EXPECT_THROW(df.next(), std::runtime_error);  // the epoch stays failed
  df.start_epoch();  // a new epoch starts clean
  EXPECT_TRUE(df.next());
}

TEST(MultiThreadBatchData, ASourceExceptionReachesTheReader) {
  auto failing = std::make_unique<DataFromGenerator>([] {
    return DataFromGenerator::Generator([i = 0]() mutable -> std::optional<Datapoint> {
      if (i == 13) throw Error(ErrorCode::bad_data, "source broke at 13");
      return Datapoint{scalar(i++)};
    });
  });
  MultiThreadBatchData df(std::move(failing), 4, [](Datapoint dp) -> std::optional<Datapoint> { return dp; });
  df.reset_state();
  const std::string message = error_message(
      [&] {
        while (df.next()) {
        }
      },
      ErrorCode::bad_data);
  EXPECT_EQ(message, "source broke at 13");
}

// The worker's function blocks until the reader's thread has mapped a datapoint (or,
// once, 300 ms pass), so that a reader that helps must map some itself.
struct WorkerWaitsForReader {
  std::thread::id reader = std::this_thread::get_id();
  std::mutex mutex;
  std::condition_variable cv;
  int by_reader = 0;
  bool timed_out = false;

  bool on_reader() const { return std::this_thread::get_id() == reader; }
  void reader_mapped() {
    {
      std::lock_guard lock(mutex);
      ++by_reader;
    }
    cv.notify_all();
  }
  void worker_waits() {
    std::unique_lock lock(mutex);
    if (!timed_out && !cv.wait_for(lock, std::chrono::milliseconds(300), [&] { return by_reader > 0; }))
      timed_out = true;
  }
};

TEST(MultiThreadBatchData, AReaderWithNoBatchReadyMapsDatapointsItselfUnlessTold) {
  for (bool helps : {true, false}) {
    WorkerWaitsForReader w;
    MultiThreadBatchData df(
        range_flow(64), 8,
        [&w](Datapoint dp) -> std::optional<Datapoint> {
          if (w.on_reader()) w.reader_mapped();
          else w.worker_waits();
          return dp;
        },
        {.num_threads = 1, .buffer_batches = 2, .reader_helps = helps});
    df.reset_state();
    std::vector<int> values;
    for (const Datapoint& batch : df.epoch())
      for (std::int32_t v : batch[0].data<std::int32_t>()) values.push_back(v);
    EXPECT_EQ(values, iota_values(64)) << "reader helps " << helps;
    std::lock_guard lock(w.mutex);
    if (helps) {
      EXPECT_GT(w.by_reader, 0);
      EXPECT_FALSE(w.timed_out);
    } else {
      EXPECT_EQ(w.by_reader, 0);
    }
  }
}

TEST(MultiThreadBatchData, AnExceptionInTheReadersOwnMappingReachesIt) {
  WorkerWaitsForReader w;
  MultiThreadBatchData df(
      range_flow(64), 8,
      [&w](Datapoint dp) -> std::optional<Datapoint> {
        if (!w.on_reader()) {
          w.worker_waits();
          return dp;
        }
        w.reader_mapped();
        throw std::runtime_error("failed on the reader's thread");
      },
      {.num_threads = 1, .buffer_batches = 2});
  df.reset_state();
  try {
    while (df.next()) {
    }
    FAIL() << "no exception";
  } catch (const std::runtime_error& e) {
    EXPECT_STREQ(e.what(), "failed on the reader's thread");
  }
}

TEST(MultiThreadBatchData, ShapeMismatchesNameTheComponent) {
  // Datapoint 2 maps to a longer vector: within one worker's batch.
  const auto uneven = [](Datapoint dp) -> std::optional<Datapoint> {
    const int v = value_of(dp[0]);
    return Datapoint{scalar(v), Array(DType::f32, Shape{v == 2 ? 3 : 2})};
  };
  MultiThreadBatchData within(range_flow(8), 4, uneven, {.num_threads = 2});
  within.reset_state();
  std::string message = error_message([&] { within.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("MultiThreadBatchData: component 1 of datapoint 2 of the batch is f32[3], datapoint 0 has f32[2]"),
            std::string::npos)
      << message;
  // Across workers' batches: dropping datapoint 1 makes the reader top up batch 0 with
  // datapoint 4, of another shape.
  const auto by_half = [](Datapoint dp) -> std::optional<Datapoint> {
    const int v = value_of(dp[0]);
    if (v == 1) return std::nullopt;
    return Datapoint{Array(DType::f32, Shape{v < 4 ? 2 : 5})};
  };
  MultiThreadBatchData across(range_flow(8), 4, by_half, {.num_threads = 2});
  across.reset_state();
  message = error_message([&] { across.next(); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("MultiThreadBatchData: component 0 of datapoint 3 of the batch is f32[5], datapoint 0 has f32[2]"),
            std::string::npos)
      << message;
}

TEST(MultiThreadBatchData, StartingAnEpochMidwayGivesAWholeCleanEpoch) {
  MultiThreadBatchData df(range_flow(300), 7, pair_with_draw(false), {.num_threads = 3, .remainder = true, .seed = 4});
  df.reset_state();
  for (int i = 0; i < 5; ++i) df.next();
  std::vector<int> labels;
  for (const Datapoint& batch : df.epoch())
    for (std::int32_t v : batch[1].data<std::int32_t>()) labels.push_back(v);
  EXPECT_EQ(labels, iota_values(300));
}

TEST(MultiThreadBatchData, DestroyingMidEpochJoinsEveryWorker) {
  std::atomic<int> mapped{0};
  {
    MultiThreadBatchData df(
        range_flow(100000), 4,
        [&mapped](Datapoint dp) -> std::optional<Datapoint> {
          std::this_thread::sleep_for(std::chrono::microseconds(200));
          ++mapped;
          return dp;
        },
        {.num_threads = 4, .buffer_batches = 4});
    df.reset_state();
    for (int i = 0; i < 3; ++i) ASSERT_TRUE(df.next());
  }
  const int after = mapped.load();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(mapped.load(), after);  // no worker is left running
  EXPECT_LT(after, 100);
}

TEST(MultiThreadBatchData, DestroyingWithoutReadingOrResettingIsFine) {
  const auto identity = [](Datapoint dp) -> std::optional<Datapoint> { return dp; };
  MultiThreadBatchData never_reset(range_flow(10), 2, identity);
  MultiThreadBatchData never_read(range_flow(10), 2, identity);
  never_read.reset_state();
}

TEST(MultiThreadBatchData, RejectsBadArguments) {
  const auto identity = [](Datapoint dp) -> std::optional<Datapoint> { return dp; };
  EXPECT_THROW(MultiThreadBatchData(range_flow(3), 0, identity), Error);
  EXPECT_THROW(MultiThreadBatchData(nullptr, 2, identity), Error);
  EXPECT_THROW(MultiThreadBatchData(range_flow(3), 2, MapFunction{}), Error);
  EXPECT_THROW(MultiThreadBatchData(range_flow(3), 2, identity, {.num_threads = 0}), Error);
  EXPECT_THROW(MultiThreadBatchData(range_flow(3), 2, identity, {.buffer_batches = 0}), Error);
}

}  // namespace
}  // namespace vkp::dataflow
