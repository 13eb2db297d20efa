// BatchData: groups consecutive datapoints into batches.
//
// Component i of a batch stacks component i of batch_size datapoints along a new
// leading axis: datapoints of shapes {[28, 28, 1], []} give a batch of shapes
// {[B, 28, 28, 1], [B]}. All datapoints of a batch must agree in component count,
// shapes and dtypes.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// Stacks datapoints, or the rows of batches, into one batch as they arrive: each is
// copied into its row at once and may be freed. The batch's arrays are allocated once,
// for `capacity` rows (a capacity of more than 16 MiB of rows starts smaller and grows).
class BatchStacker {
 public:
  // `who` names the caller in errors.
  BatchStacker(std::size_t capacity, std::string who);

  // Appends `dp` as the next row. The first row of a batch fixes the components, shapes
  // and dtypes; a datapoint that differs is an Error(invalid_argument) naming the
  // component, and leaves the stacker as it was.
  void add(const Datapoint& dp);
  // Appends rows [begin, end) of `batch`, a stacked batch (every component has a
  // leading axis of the same extent), with the checks of add().
  void add_rows(const Datapoint& batch, std::size_t begin, std::size_t end);

  std::size_t rows() const { return rows_; }
  std::size_t capacity() const { return capacity_; }
  bool full() const { return rows_ == capacity_; }
  // The batch of rows() rows; the stacker is empty afterwards. At least one row.
  Datapoint take();
  // Drops the rows; the arrays stay for the next batch if its rows have their shapes.
  void clear() { rows_ = 0; }

 private:
  void check_row(const Datapoint& dp, std::size_t components, bool stacked) const;
  void reserve_for(const Datapoint& dp, bool stacked, std::size_t more);

  std::size_t capacity_;
  std::string who_;
  Datapoint batch_;                    // one array per component, allocated_ rows
  std::vector<std::size_t> row_bytes_;  // by component
  std::size_t allocated_ = 0;
  std::size_t rows_ = 0;
};

class BatchData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
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
  BatchStacker stacker_;
};

// Stacks `points` (at least one) as described above. `who` names the caller in errors.
Datapoint stack_datapoints(const std::vector<Datapoint>& points, const std::string& who = "BatchData");

}  // namespace vkp::dataflow
