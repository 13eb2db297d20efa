// RandomMixData: all datapoints of several flows of known size, interleaved in a random
// order; an epoch yields each flow's epoch whole, each flow's datapoints in its own order.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class RandomMixData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return pointers(flows_); }
  // Every flow must know its size; a flow whose epoch ends early is an Error.
  explicit RandomMixData(std::vector<DataFlowPtr> flows, std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override { return total_; }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<DataFlowPtr> flows_;
  std::vector<std::size_t> sizes_;
  std::size_t total_ = 0;
  std::uint64_t seed_;
  Rng rng_{0};
  std::vector<std::uint32_t> picks_;  // the flow of each datapoint of the epoch
  std::vector<std::size_t> taken_;    // datapoints read from each flow this epoch
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
