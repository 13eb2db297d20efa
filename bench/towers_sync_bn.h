// vkpack_bench_towers --sync-bn[=DEPTH]: what synchronized BatchNorm costs a step of two
// replicated towers of examples/resnet's ResNet (BatchNormOptions::sync_statistics: the
// towers exchange their moments in forward and two sums in backward through the host),
// against the same towers with per-tower BatchNorm, in turns in the same run.
#pragma once

#include <cstdint>

namespace vkp::bench {

// ResNet-`depth` at `batch` images a tower, the median of `steps` steps a round, best of 3 rounds.
void sync_batch_norm_cost(int device_index, int depth, std::int64_t batch, int steps);

}  // namespace vkp::bench
