// DataFromList: the datapoints of a list held in memory, in order or shuffled per epoch.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class DataFromList : public DataFlow {
 public:
  // Each epoch yields a copy of every datapoint of `list` once; with `shuffle`, in an
  // order drawn from `seed` (a new order each epoch, the same sequence of orders for the
  // same seed).
  explicit DataFromList(std::vector<Datapoint> list, bool shuffle = true, std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override { return list_.size(); }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::vector<Datapoint> list_;
  bool shuffle_;
  std::uint64_t seed_;
  Rng rng_{0};
  std::vector<std::size_t> order_;  // empty when not shuffling
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
