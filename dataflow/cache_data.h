// CacheData: reads the wrapped flow once and serves later epochs from memory.
//
// The cache is kept only after a whole first epoch has been read; an epoch abandoned
// part way is read again from the wrapped flow. Memory: a copy of every datapoint.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class CacheData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // With `shuffle`, the cached epochs come in an order drawn from `seed`; the first
  // epoch always comes in the wrapped flow's order.
  explicit CacheData(DataFlowPtr df, bool shuffle = false, std::uint64_t seed = 0);

  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  bool shuffle_;
  std::uint64_t seed_;
  Rng rng_{0};
  bool complete_ = false;        // cache_ holds a whole epoch
  std::vector<Datapoint> cache_;
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
