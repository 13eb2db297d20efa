// MultiThreadRunner: several copies of a dataflow, each run by its own thread, epoch
// after epoch without end, filling one bounded queue that the reader drains.
//
// The copies are made by a factory (C++ cannot fork a flow the way tensorpack's
// processes do); the factory gets the copy's index, so that shuffling and augmenting
// copies can be seeded differently. The runner's output is one endless stream: an
// epoch of the runner is size() datapoints of it, as in tensorpack's
// MultiProcessRunner, so the runner's epochs do not align with any copy's epochs.
// With an unknown size an epoch never ends. The interleaving of copies depends on
// thread timing: the order is not reproducible, the content of each copy is.
//
// A copy that throws stops its thread; the exception is rethrown, unchanged, by the
// reader's next next() (and every later one). A copy whose epoch is empty stops its
// thread too; when every thread has stopped the runner's epochs are empty. Destroying
// the runner closes the queue and joins every thread, mid-epoch or not.
#pragma once

#include <exception>
#include <functional>
#include <thread>

#include "dataflow/bounded_queue.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

struct MultiThreadRunnerOptions {
  std::size_t num_threads = 2;
  std::size_t queue_size = 256;  // datapoints waiting in the queue at most
  // A thread hands over datapoints in batches of up to `chunk` (sooner when the reader
  // waits), to lock the queue once per batch.
  std::size_t chunk = 16;
};

class MultiThreadRunner : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return pointers(copies_); }
  using Factory = std::function<DataFlowPtr(std::size_t index)>;

  // Calls factory(0) ... factory(num_threads - 1) now; each copy is reset and read on
  // its own thread.
  MultiThreadRunner(const Factory& factory, MultiThreadRunnerOptions options = {});
  ~MultiThreadRunner() override;

  // Copy 0's size.
  std::optional<std::size_t> size() const override { return size_; }

 protected:
  // With more than one thread: the copies' interleaving follows thread timing.
  std::string own_replay_obstacle() const override;
  void on_reset_state() override;
  void on_start_epoch() override { yielded_ = 0; }
  std::optional<Datapoint> on_next() override;

 private:
  // A datapoint, or an exception from a copy, or (neither) the notice that a thread ended.
  struct Item {
    std::optional<Datapoint> datapoint;
    std::exception_ptr error;
  };

  void run_copy(DataFlow& copy);

  std::vector<DataFlowPtr> copies_;
  std::optional<std::size_t> size_;
  MultiThreadRunnerOptions options_;
  BoundedQueue<Item> queue_;
  // The reader's side:
  std::vector<Item> taken_;  // taken from the queue, not yet yielded
  std::size_t taken_position_ = 0;
  std::size_t running_ = 0;  // threads that have not ended
  std::size_t yielded_ = 0;  // in this epoch
  std::exception_ptr error_;
  std::vector<std::thread> threads_;  // joined in the destructor
};

}  // namespace vkp::dataflow
