// LocallyShuffleData: shuffles a stream that is too large (or too slow) to shuffle
// whole, through a buffer of `buffer_size` datapoints.
//
// The buffer is filled from the wrapped flow; each output is a random datapoint of the
// buffer, whose place the next input takes. At the end of the wrapped epoch the buffer
// is drained in random order, so one epoch yields every input datapoint exactly
// `reuse` times. The wider the buffer, the closer to a full shuffle.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class LocallyShuffleData : public DataFlow {
 public:
  std::vector<const DataFlow*> inputs() const override { return {df_.get()}; }
  // `reuse`: each input datapoint enters the buffer that many times (copies), as
  // tensorpack's nr_reuse.
  LocallyShuffleData(DataFlowPtr df, std::size_t buffer_size, std::uint64_t seed = 0, std::size_t reuse = 1);

  std::optional<std::size_t> size() const override;

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  DataFlowPtr df_;
  std::size_t buffer_size_;
  std::uint64_t seed_;
  std::size_t reuse_;
  Rng rng_{0};
  std::vector<Datapoint> buffer_;
  bool input_done_ = false;
};

}  // namespace vkp::dataflow
