// MultiThreadBatchData: MultiThreadMapData and BatchData in one, with the mapping and
// the batching both done on worker threads.
//
// Workers take a few consecutive datapoints of the wrapped flow at a time (one worker at
// a time reads it), map them outside any lock and copy each into its row of its batch,
// whose arrays are allocated once and shared by the workers filling it. A datapoint is
// thus made, mapped and freed on one thread, and the reading thread receives whole
// batches: a lock and a wake-up per batch rather than per datapoint. This is the runner
// for cheap per-datapoint work that is batched next (a small image decoded, cropped and
// flipped: about a microsecond), where MultiThreadMapData followed by BatchData spends as
// long handing datapoints between threads as mapping them.
//
// Ordered, the batches are exactly those of
//   BatchData(MultiThreadMapData(df, func, {.ordered = true, .seed = seed}), batch_size, remainder)
// for any number of threads: datapoint k (counted from reset_state(), across epochs) is
// mapped with Rng(seed, k). Unordered, batches are yielded as they are completed. A
// function that drops datapoints leaves holes in its batch; the reading thread then
// fills batches up from the next ones (copying rows), so that every batch but an epoch's
// last has batch_size rows.
//
// A reader that finds no batch ready maps datapoints itself, as one more worker, rather
// than sleeping (reader_helps): its thread is blocked in next() anyway, and waking a
// sleeping thread costs more than a few datapoints. It stops helping after the run in
// hand, so its own batch waits at most a few datapoints' work. Batches are the same
// whoever mapped them.
//
// At most `buffer_batches` batches are taken from the flow and not yet yielded: a reader
// that stops reading leaves the workers waiting. Epochs are exact. An exception thrown by
// the function or the wrapped flow is rethrown, unchanged, by the next next() (and every
// later one, until start_epoch()). Destroying the flow stops and joins every worker,
// mid-epoch or not.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <thread>

#include "dataflow/batch_data.h"
#include "dataflow/multi_thread_map_data.h"

namespace vkp::dataflow {

struct MultiThreadBatchOptions {
  std::size_t num_threads = 2;
  bool remainder = false;  // as BatchData's
  bool ordered = true;
  // Batches taken from the flow and not yet yielded, at most: the bound on memory, and
  // the slack that lets workers run ahead of a reader that pauses.
  std::size_t buffer_batches = 4;
  std::uint64_t seed = 0;  // for RandomMapFunction
  // The reader maps datapoints while no batch is ready (see above); false: it sleeps.
  bool reader_helps = true;
};

class BatchBoard;  // internal/batch_board.h
struct BatchRun;
struct BatchSlot;

class MultiThreadBatchData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // `func` must be safe to call from several threads at once.
  MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, RandomMapFunction func,
                       MultiThreadBatchOptions options = {});
  MultiThreadBatchData(DataFlowPtr df, std::size_t batch_size, MapFunction func, MultiThreadBatchOptions options = {});
  ~MultiThreadBatchData() override;

  // As BatchData's (an upper bound when the function drops datapoints).
  std::optional<std::size_t> size() const override;

 protected:
  // Unordered with more than one thread: the order follows thread timing.
  std::string own_replay_obstacle() const override;
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  enum class Taken { run, none, stop };
  void worker_loop();
  // Takes up to kRun datapoints of one batch; with `wait`, waits until it may.
  Taken take_run(BatchRun& run, std::vector<Datapoint>& taken, bool wait);
  // For a run the flow ended or failed in, with run.count of `want` read: gives the rest
  // back and records the end or the error; whether the reader should be woken. The
  // caller holds source_mutex_, so no start_epoch() has begun a new generation since.
  bool cut_short(BatchRun& run, std::size_t want, std::exception_ptr error);
  // Maps and writes the datapoints of a run, then completes it.
  void do_run(BatchRun& run, std::vector<Datapoint>& taken);
  void write_row(BatchSlot& slot, std::size_t row, const Datapoint& dp) const;
  void complete_run(BatchRun& run, std::size_t kept, std::exception_ptr error);
  // The reader's side: rows of `pending_` to move into `stacker_`.
  std::optional<Datapoint> take_pending_rows();

  DataFlowPtr df_;
  std::size_t batch_size_;
  RandomMapFunction func_;
  MultiThreadBatchOptions options_;

  std::mutex source_mutex_;  // held by the thread reading df_; taken before mutex_
  std::mutex mutex_;
  std::condition_variable workers_cv_;
  std::condition_variable reader_cv_;
  // What the workers and the reader share, read and written under mutex_ only.
  std::unique_ptr<BatchBoard> board_;

  // The reading thread's: a batch with holes or short, whose rows go through stacker_.
  BatchStacker stacker_;
  std::shared_ptr<BatchSlot> pending_;
  std::size_t pending_row_ = 0, pending_rows_ = 0;
  std::vector<Datapoint> helped_;  // the datapoints of the reader's run, when it helps

  std::vector<std::thread> threads_;  // last: joined in the destructor before the rest goes
};

}  // namespace vkp::dataflow
