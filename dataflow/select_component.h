// SelectComponent: keeps the components at the given indices, in the given order
// ({2, 0} of {a, b, c} is {c, a}); an index may repeat.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class SelectComponent : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  SelectComponent(DataFlowPtr df, std::vector<std::size_t> indices);

  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::vector<std::size_t> indices_;
  std::vector<bool> last_use_;  // by position in indices_: the component can be moved
};

}  // namespace vkp::dataflow
