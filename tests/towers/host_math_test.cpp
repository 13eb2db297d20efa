// The host-side arithmetic of the towers: the weighted average of gradients against a
// double reference, and the host optimizer's threaded, vectorised update against the
// same update one element at a time.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "engine/graph/attrs.h"
#include "towers/host_average.h"
#include "towers/host_optimizer.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using graph::OptimizerKind;

TEST(HostAverage, WeightedSumMatchesADoubleReference) {
  for (const std::size_t n : {std::size_t{1}, std::size_t{7}, std::size_t{65537}, std::size_t{300001}}) {
    const std::vector<float> a = random_floats(n, 1), b = random_floats(n, 2), c = random_floats(n, 3);
    const std::vector<const float*> in{a.data(), b.data(), c.data()};
    const std::vector<float> w{0.25f, 0.5f, 0.25f};
    std::vector<float> out(n, NAN);
    towers::weighted_sum(in, w, out.data(), n);
    for (std::size_t i = 0; i < n; ++i) {
      const double expected = 0.25 * a[i] + 0.5 * b[i] + 0.25 * c[i];
      ASSERT_NEAR(out[i], expected, 1e-6) << "n " << n << " at " << i;
    }
  }
}

TEST(HostOptimizer, ThreadsAndVectorsUpdateAsOneElementAtATime) {
  // Above ~1M elements (here not a multiple of the chunk) the update runs on every
  // thread, vectorised; it must round as the plain loop over one element does.
  const std::size_t n = (std::size_t{1} << 20) + 77;
  for (const OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::momentum, OptimizerKind::nesterov,
                                   OptimizerKind::adam, OptimizerKind::adamw}) {
    const towers::HostOptimizerStep step{.kind = kind,
                                         .learning_rate = 0.3f,
                                         .momentum = 0.8f,
                                         .beta2 = 0.95f,
                                         .epsilon = 1e-3f,
                                         .weight_decay = 0.05f,
                                         .global_step = 6};
    const std::vector<float> g = random_floats(n, 4);
    std::vector<float> v = random_floats(n, 5), m = random_floats(n, 6), s = random_floats(n, 7);
    for (float& x : s) x *= x;  // a second moment
    std::vector<float> v1 = v, m1 = m, s1 = s;
    towers::apply_host_optimizer(step, v.data(), g.data(), m.data(), s.data(), n);
    for (std::size_t i = 0; i < n; ++i) towers::apply_host_optimizer(step, &v1[i], &g[i], &m1[i], &s1[i], 1);
    EXPECT_EQ(v, v1) << "optimizer kind " << static_cast<int>(kind);
    EXPECT_EQ(m, m1) << "optimizer kind " << static_cast<int>(kind);
    EXPECT_EQ(s, s1) << "optimizer kind " << static_cast<int>(kind);
    EXPECT_NE(v, random_floats(n, 5)) << "optimizer kind " << static_cast<int>(kind) << " changed nothing";
  }
}

}  // namespace
}  // namespace vkp::test
