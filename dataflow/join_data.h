// JoinData: datapoints side by side. The k-th datapoint joins the components of the
// k-th datapoints of every flow, in flow order: {a0, a1} and {b0} give {a0, a1, b0}.
// The epoch ends when the first flow's epoch ends.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class JoinData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return pointers(flows_); }
  // At least one flow. Logs a warning when the known sizes differ.
  explicit JoinData(std::vector<DataFlowPtr> flows);

  // The smallest size, unknown when any is.
  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<DataFlowPtr> flows_;
};

}  // namespace vkp::dataflow
