// TestDataSpeed: how fast a dataflow yields, in datapoints per second, with a progress
// bar on stderr (or any stream), as tensorpack's TestDataSpeed.
#pragma once

#include <cstdio>

#include "dataflow/dataflow.h"

namespace vkp::dataflow {

struct DataSpeed {
  std::size_t datapoints = 0;  // timed, after the warm-up
  double seconds = 0;
  double per_second() const { return seconds > 0 ? static_cast<double>(datapoints) / seconds : 0; }
};

class TestDataSpeed {
 public:
  // Times `count` datapoints after `warmup` untimed ones, starting new epochs as needed
  // (an empty epoch ends the test early). `progress`: where the bar goes; null for none.
  TestDataSpeed(DataFlow& df, std::size_t count = 5000, std::size_t warmup = 0, std::FILE* progress = stderr);

  // Resets the flow if it was not, then reads it. Logs the result and returns it.
  DataSpeed run();

 private:
  void draw_bar(std::size_t done, double seconds) const;

  DataFlow* df_;
  std::size_t count_;
  std::size_t warmup_;
  std::FILE* progress_;
};

}  // namespace vkp::dataflow
