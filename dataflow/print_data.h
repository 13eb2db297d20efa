// PrintData: a pass-through dataflow that logs what the first datapoints look like
// (component shapes, dtypes, value ranges), for checking a pipeline by eye.
#pragma once

#include <string>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

// "0: f32[28, 28, 1] in [0, 1]" per component, one line each, for log output.
std::string describe_datapoint(const Datapoint& dp);

class PrintData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // Logs the first `count` datapoints of the first epoch, headed by `name`.
  explicit PrintData(DataFlowPtr df, std::size_t count = 2, std::string name = "PrintData");

  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t count_;
  std::string name_;
  std::size_t printed_ = 0;
};

}  // namespace vkp::dataflow
