// MapData and MapDataComponent: apply a function to every datapoint, or to one
// component of every datapoint. Returning nullopt drops the datapoint.
#pragma once

#include <functional>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

using MapFunction = std::function<std::optional<Datapoint>(Datapoint)>;
using ComponentFunction = std::function<std::optional<Array>(Array)>;

class MapData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  MapData(DataFlowPtr df, MapFunction func);

  // The wrapped flow's size, as tensorpack reports it: an upper bound when `func` drops.
  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  MapFunction func_;
};

class MapDataComponent : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // Replaces component `index` by func(component).
  MapDataComponent(DataFlowPtr df, ComponentFunction func, std::size_t index = 0);

  std::optional<std::size_t> size() const override { return df_->size(); }

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override { df_->start_epoch(); }
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  ComponentFunction func_;
  std::size_t index_;
};

// Throws Error(invalid_argument) naming `who` unless dp has a component `index`.
void require_component(const Datapoint& dp, std::size_t index, const std::string& who);

}  // namespace vkp::dataflow
