// vkpack_bench_towers --split=I,J: two towers on two devices (lavapipe and SwiftShader,
// say: two vendors' drivers) sharing each step's global batch equally and by measured
// throughput (train/batch_split.h), against each device alone on the whole batch.
#pragma once

#include <cstdint>

namespace vkp::bench {

// `batch` rows a step (--split-batch, default 128).
void split_across_devices(int first, int second, std::int64_t batch, int steps);

}  // namespace vkp::bench
