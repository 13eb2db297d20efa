// RandomChooseData: each datapoint comes from a flow picked at random, with given
// probabilities; the epoch ends when a picked flow has no datapoint left.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class RandomChooseData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return pointers(flows_); }
  // `weights`: one non-negative weight per flow (normalised here); empty: all equal.
  RandomChooseData(std::vector<DataFlowPtr> flows, std::vector<double> weights = {}, std::uint64_t seed = 0);

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<DataFlowPtr> flows_;
  std::vector<double> cumulative_;  // running sums of the normalised weights
  std::uint64_t seed_;
  Rng rng_{0};
};

}  // namespace vkp::dataflow
