// DataFromGenerator: datapoints from a user function, as tensorpack's DataFromGenerator
// wraps a Python generator.
#pragma once

#include <functional>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class DataFromGenerator : public DataFlow {
 public:
  // Yields datapoints until it returns nullopt (the end of the epoch).
  using Generator = std::function<std::optional<Datapoint>()>;

  // `make_generator` is called at the start of every epoch and returns that epoch's
  // generator. `size` is what size() reports; the generator decides the actual count.
  explicit DataFromGenerator(std::function<Generator()> make_generator,
                             std::optional<std::size_t> size = std::nullopt);

  std::optional<std::size_t> size() const override { return size_; }

 protected:
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;

 private:
  std::function<Generator()> make_generator_;
  std::optional<std::size_t> size_;
  Generator generator_;
};

}  // namespace vkp::dataflow
