// RepeatedData repeats whole epochs of a dataflow; RepeatedDataPoint repeats each
// datapoint in place.
#pragma once

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class RepeatedData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // One epoch of RepeatedData is `times` epochs of `df`, or endless with nullopt.
  // An endless repetition of a flow whose epoch is empty ends instead of spinning.
  RepeatedData(DataFlowPtr df, std::optional<std::size_t> times);

  // Unknown when endless.
  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::optional<std::size_t> times_;
  std::size_t passes_done_ = 0;
  bool pass_yielded_ = false;  // whether the current pass of df_ gave any datapoint
};

class RepeatedDataPoint : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // Yields every datapoint of `df` `times` times in a row (copies).
  RepeatedDataPoint(DataFlowPtr df, std::size_t times);

  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override { df_->reset_state(); }
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t times_;
  Datapoint current_;
  std::size_t left_ = 0;  // further yields of current_
};

}  // namespace vkp::dataflow
