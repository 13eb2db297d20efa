// FakeData: random arrays of given shapes and dtypes, for tests and speed measurements.
#pragma once

#include <cstdint>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

struct FakeDataOptions {
  std::size_t size = 1000;    // datapoints per epoch
  std::vector<DType> dtypes;  // one per shape; empty: every component f32
  // Values: f32 and f16 uniform in [low, high); i32, i64 and u8 uniform over the integers
  // in [low, high), which must hold at least one (u8 also within [0, 255]).
  double low = 0;
  double high = 1;
  // false: one datapoint is drawn at reset_state() and yielded `size` times, so that
  // a speed test measures the pipeline rather than the generator.
  bool random = true;
  std::uint64_t seed = 0;
};

class FakeData : public DataFlow {
 public:
  explicit FakeData(std::vector<Shape> shapes, FakeDataOptions options = {});

  std::optional<std::size_t> size() const override { return options_.size; }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override { position_ = 0; }
  std::optional<Datapoint> on_next() override;

 private:
  Datapoint draw();

  std::vector<Shape> shapes_;
  FakeDataOptions options_;
  Rng rng_{0};
  Datapoint fixed_;  // the repeated datapoint when !options_.random
  std::size_t position_ = 0;
};

}  // namespace vkp::dataflow
