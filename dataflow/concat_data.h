// ConcatData: the epochs of several dataflows one after another.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class ConcatData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return pointers(flows_); }
  // An empty list makes an empty flow.
  explicit ConcatData(std::vector<DataFlowPtr> flows);

  // The sum of the sizes, unknown when any is.
  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<DataFlowPtr> flows_;
  std::size_t current_ = 0;  // the flow being read
};

}  // namespace vkp::dataflow
