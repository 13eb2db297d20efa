// MultiThreadMapData: MapData with the function run on worker threads.
//
// Workers take chunks of consecutive datapoints from the wrapped flow (one worker at a
// time reads it), map them outside any lock, and hand the results to the reading thread.
// At most `buffer_size` datapoints are taken from the flow and not yet passed on: the
// buffer is bounded, and a reader that stops reading leaves the workers waiting, never
// piling up datapoints.
//
// Epochs are exact: an epoch of MultiThreadMapData maps one epoch of the wrapped flow,
// and workers do not read ahead into the next one. `ordered` keeps the wrapped flow's
// order; unordered yields results as workers finish them.
//
// Randomness: with a RandomMapFunction, datapoint k (counted from reset_state(), across
// epochs) is mapped with Rng(seed, k), whichever thread maps it, so the results are the
// same for any number of threads; ordered, so is their order.
//
// An exception thrown by the function or by the wrapped flow is rethrown, unchanged, by
// the next next() of the reading thread (and every later one, until start_epoch()).
// Destroying the flow stops and joins every worker, mid-epoch or not.
//
// Speed: every datapoint is allocated on a worker and freed on the reader, and glibc's
// allocator serialises such frees on a lock. For cheap per-datapoint work (a few
// microseconds) that handover costs as much as the work; when the results are batched
// next, MultiThreadBatchData maps and batches on the workers and hands over batches.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <functional>
#include <map>
#include <mutex>
#include <thread>

#include "core/rng.h"
#include "dataflow/map_data.h"

namespace vkp::dataflow {

using RandomMapFunction = std::function<std::optional<Datapoint>(Datapoint, Rng&)>;

struct MultiThreadMapOptions {
  std::size_t num_threads = 2;
  std::size_t buffer_size = 256;  // datapoints taken from the flow, not yet yielded
  bool ordered = true;
  // Datapoints a worker takes from the flow at once: larger amortises locking over more
  // work, smaller spreads small epochs over more threads. Capped by buffer_size.
  std::size_t chunk = 16;
  std::uint64_t seed = 0;  // for RandomMapFunction
};

class MultiThreadMapData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // `func` must be safe to call from several threads at once.
  MultiThreadMapData(DataFlowPtr df, MapFunction func, MultiThreadMapOptions options = {});
  MultiThreadMapData(DataFlowPtr df, RandomMapFunction func, MultiThreadMapOptions options = {});
  ~MultiThreadMapData() override;

  // The wrapped flow's size (an upper bound when the function drops datapoints).
  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  // Unordered with more than one thread: the order follows thread timing.
  std::string own_replay_obstacle() const override;
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  // Consecutive datapoints [first, first + results.size()) of one generation (epoch).
  struct Chunk {
    std::uint64_t first = 0;
    std::uint64_t generation = 0;
    std::vector<std::optional<Datapoint>> results;  // nullopt: dropped by the function
  };

  // What the reading thread waits for, so that workers wake it only when it can go on.
  enum class ReaderWait { nothing, data, source };

  void worker_loop();
  bool can_take() const;
  Chunk take_from_source(std::unique_lock<std::mutex>& lock);
  void map_chunk(Chunk& chunk) const;
  void deliver(std::unique_lock<std::mutex>& lock, Chunk chunk, std::exception_ptr error);
  bool chunk_ready() const;
  bool epoch_done() const;
  bool reader_can_go_on() const;
  void wake(std::unique_lock<std::mutex>& lock, bool reader, bool worker);

  DataFlowPtr df_;
  RandomMapFunction func_;
  MultiThreadMapOptions options_;

  std::mutex mutex_;
  std::condition_variable workers_cv_;
  std::condition_variable reader_cv_;
  // What the workers and the reader share, read and written under mutex_ only.
  struct Shared {
    bool stop = false;
    ReaderWait reader_waits = ReaderWait::nothing;
    int workers_waiting = 0;
    std::uint64_t generation = 0;          // bumped by every start_epoch()
    bool source_open = false;              // the current epoch of df_ may be read
    bool source_busy = false;              // a thread is calling into df_
    std::uint64_t next_index = 0;          // index of the next datapoint taken from df_
    std::uint64_t consumed = 0;            // index (ordered) / count (unordered) handed on
    std::optional<std::uint64_t> end;      // next_index when df_'s epoch ended
    std::map<std::uint64_t, Chunk> ready;  // mapped chunks by first index
    std::exception_ptr error;
  };
  Shared shared_;

  // The reading thread's chunk being yielded.
  std::vector<std::optional<Datapoint>> current_;
  std::size_t current_position_ = 0;

  std::vector<std::thread> threads_;  // last: joined in the destructor before the rest goes
};

}  // namespace vkp::dataflow
