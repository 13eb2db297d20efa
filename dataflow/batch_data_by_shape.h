// tensorpack's BatchDataByShape and DataFromQueue.
#pragma once

#include <map>
#include <memory>

#include "dataflow/bounded_queue.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// Batches of `batch_size` datapoints whose component `component` has one shape, for
// inputs of several shapes (images of several sizes): datapoints wait in a group per
// shape, and a group that fills becomes the next batch (stacked as BatchData stacks).
// Groups left partly filled when the input's epoch ends are dropped, as tensorpack's;
// so size() is unknown. Memory: up to batch_size - 1 datapoints per shape seen.
class BatchDataByShape : public DataFlow {
 public:
  BatchDataByShape(DataFlowPtr df, std::size_t batch_size, std::size_t component);
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t batch_size_, component_;
  std::map<std::vector<std::int64_t>, std::vector<Datapoint>> groups_;
};

// tensorpack's DataFromQueue: the datapoints other threads push into `queue`, in the
// order they arrive; an epoch ends when the queue is closed and empty (tensorpack's never
// ends: close the queue to end it). Reading waits while the queue is empty and open.
class DataFromQueue : public DataFlow {
 public:
  explicit DataFromQueue(std::shared_ptr<BoundedQueue<Datapoint>> queue);

 protected:
  void on_start_epoch() override {}  // the queue goes on where the last epoch stopped
  std::optional<Datapoint> on_next() override;

 private:
  std::shared_ptr<BoundedQueue<Datapoint>> queue_;
  std::vector<Datapoint> ready_;  // popped, not yet handed out (front at the back)
};

}  // namespace vkp::dataflow
