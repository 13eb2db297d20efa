// FixedSizeData: epochs of exactly `size` datapoints cut from a flow, restarting the
// flow's epochs as often as needed.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class FixedSizeData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // With `keep_state`, an epoch continues where the previous one stopped reading `df`;
  // without it, every epoch starts a new epoch of `df`.
  FixedSizeData(DataFlowPtr df, std::size_t size, bool keep_state = true);

  std::optional<std::size_t> size() const override { return size_; }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t size_;
  bool keep_state_;
  std::size_t count_ = 0;
};

}  // namespace vkp::dataflow
