// ProxyDataFlow: a flow that reads one other flow and, until a subclass says otherwise,
// gives its datapoints, its size and its lifecycle unchanged (tensorpack's
// ProxyDataFlow). Derive from it to change what passes through: override on_next (and
// read df() there), size, or the other hooks, calling the proxy's own to keep the
// forwarding.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class ProxyDataFlow : public DataFlow {
 public:
  explicit ProxyDataFlow(DataFlowPtr df);

  std::optional<std::size_t> size() const override { return df_->size(); }
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override { return df_->next(); }

  // The flow this one reads.
  DataFlow& df() { return *df_; }
  const DataFlow& df() const { return *df_; }

 private:
  DataFlowPtr df_;
};

}  // namespace vkp::dataflow
