// A term that makes one tower slower than another on any device, for the tests of
// free-running (async) towers: `links` dependent 32 x 32 products, each its own
// dispatch behind a barrier, so that what it costs is the latency of a dispatch rather
// than arithmetic. That scales alike on lavapipe (tens of us a dispatch) and on a
// discrete GPU (a few us); products sized to be slow on lavapipe (320 x 320) took
// microseconds on an H100, where the "slow" tower then kept pace with the fast one.
// 400 links make a step about 10x the small models' on lavapipe with both towers busy
// (200 gave 2-4x). Its value (the products of numbers below 1e-3 underflow to 0) enters
// a cost times 0.
#pragma once

#include "engine/graph/ops.h"

namespace vkp::test {

inline graph::Tensor slow_work(const graph::Tensor& x, int links = 400) {
  graph::Tensor z =
      graph::broadcast_to(graph::reshape(graph::reduce_mean(graph::stop_gradient(x)) * 1e-3f, {1, 1}), {32, 32});
  for (int i = 0; i < links; ++i) z = graph::matmul(z, z);
  return 0.0f * graph::stop_gradient(graph::reduce_sum(z));
}

}  // namespace vkp::test
