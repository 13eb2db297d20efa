// BatchData: groups consecutive datapoints into batches.
//
// Component i of a batch stacks component i of batch_size datapoints along a new
// leading axis: datapoints of shapes {[28, 28, 1], []} give a batch of shapes
// {[B, 28, 28, 1], [B]}. All datapoints of a batch must agree in component count,
// shapes and dtypes.
#pragma once

#include "vkpack/dataflow/dataflow.h"

namespace vkp::dataflow {

class BatchData : public DataFlow {
 public:
  // With `remainder`, the last datapoints of an epoch that do not fill a whole batch
  // form a smaller batch; without it they are dropped.
  BatchData(DataFlowPtr df, std::size_t batch_size, bool remainder = false);

  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t batch_size_;
  bool remainder_;
  std::vector<Datapoint> pending_;  // reused between batches
};

// Stacks `points` (at least one) as described above. `who` names the caller in errors.
Datapoint stack_datapoints(const std::vector<Datapoint>& points, const std::string& who = "BatchData");

}  // namespace vkp::dataflow
