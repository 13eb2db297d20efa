// tensorpack's layers built from ops: the batch-norm family (BatchNorm, BNReLU, virtual
// batches, BatchRenorm), the regularizers, PReLU, Maxout and FixedUnPooling. Each through
// check_op (op_check.h: device against the reference, gradients against finite
// differences) and against its definition computed here in double or by hand.
#include "engine/graph/layers.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/linear_wrap.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "max_difference.h"
#include "op_check.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;

using Inputs = std::vector<Tensor>;

// Batch norm's device results against the reference, forward and backward. The batch
// statistics are f32 sums over m rows (Welford within a chunk, Chan's merge across), off
// by about sqrt(m) u |x| in the typical case (u = 2^-24): 3.8e-6 at m = 4096, the largest
// m per channel here; the backward multiplies that by |x_hat| (below 4 here). 2e-5
// covers it; the largest error measured over these shapes is 6e-7 (it was checked at
// 1e-3 before, which would pass a statistic off by a thousandth).
constexpr double kBatchNormTolerance = 2e-5;

TEST(Ops, BatchNormTrainingUsesBatchStatistics) {
  // m * c above 4096 (the second to fourth shapes) splits the statistics into chunks of
  // several rows, merged by Chan's rule; the first takes one row per chunk. On a CPU
  // device the normalization gives each invocation 4 rows (2048 x 8), 8 (1144 x 40) or
  // 4 rows but the last invocations 3 (1287 x 12: rows past m skipped).
  check_op({.name = "BatchNorm training",
            .inputs = {f32({4, 3, 5, 6})},
            .more_inputs = {{f32({16, 16, 16, 8})}, {f32({8, 13, 11, 40})}, {f32({9, 11, 13, 12})}},
            .build = [](Inputs& in) { return BatchNorm("bn", in[0]) * 1.5f; },
            .forward_tolerance = kBatchNormTolerance,
            .gradient_tolerance = 1e-4,
            .backward_tolerance = kBatchNormTolerance});
}

TEST(Ops, BNReLUIsReluOfBatchNormInOneKernel) {
  // 6 channels (one float at a time) and 8 (vec4s); 1287 rows leave the last rows of
  // the normalization's invocations on a CPU device one short.
  for (const std::int64_t channels : {6, 8})
    check_op({.name = "BNReLU training, " + std::to_string(channels) + " channels",
              .inputs = {f32({4, 3, 5, channels})},
              .more_inputs = {{f32({16, 12, 12, channels})}, {f32({9, 11, 13, channels})}},
              .build = [](Inputs& in) { return BNReLU("bn", in[0]) * 1.5f; },
              .forward_tolerance = kBatchNormTolerance,
              .gradient_tolerance = 1e-4,
              .backward_tolerance = kBatchNormTolerance});
  check_op({.name = "batch_norm relu with fixed statistics",
            .inputs = {f32({6, 4}), f32({1, 4}), f32({1, 4}), f32({4}), f32({4})},
            .build = [](Inputs& in) {
              const Tensor stats = concat({in[1], square(in[2]) + 0.5f}, 0);
              return batch_norm(in[0], stats, in[3], in[4], {.epsilon = 1e-3f, .batch_stats = false, .relu = true});
            },
            .forward_tolerance = kBatchNormTolerance,
            .gradient_tolerance = 1e-4,
            .backward_tolerance = kBatchNormTolerance});
}

// One tower: sync_statistics exchanges its moments and sums with itself (the program's
// exchanges, completed by wait()), so it is BatchNorm of that tower's batch; through the
// moments' E[x^2] - E[x]^2 and the exchanged sums in backward (towers: sync_batch_norm_test).
TEST(Ops, BatchNormWithSyncStatisticsAloneIsBatchNorm) {
  for (const bool relu : {false, true})
    check_op(
        {.name = std::string(relu ? "BNReLU" : "BatchNorm") + " with sync_statistics",
         .inputs = {f32({4, 3, 5, 6})},
         .more_inputs = {{f32({9, 11, 13, 8})}},
         .build = [relu](Inputs& in) { return BatchNorm("bn", in[0], {.relu = relu, .sync_statistics = true}) * 1.5f; },
         .forward_tolerance = kBatchNormTolerance,
         .gradient_tolerance = 1e-4,
         .backward_tolerance = kBatchNormTolerance});
}

TEST(Ops, BatchNormStatisticsAndFixedStatistics) {
  check_op({.name = "bn_stats",
            .inputs = {f32({5, 3, 7})},
            .more_inputs = {{f32({300, 40})}, {f32({5000, 3})}},
            .build = [](Inputs& in) { return bn_stats(in[0]); }});
  // stats = (m, v^2 + 0.5) keeps the variance positive.
  check_op({.name = "batch_norm with fixed statistics",
            .inputs = {f32({6, 4}), f32({1, 4}), f32({1, 4}), f32({4}), f32({4})},
            .build = [](Inputs& in) {
              const Tensor stats = concat({in[1], square(in[2]) + 0.5f}, 0);
              return batch_norm(in[0], stats, in[3], in[4], {.epsilon = 1e-3f, .batch_stats = false});
            },
            .forward_tolerance = kBatchNormTolerance,
            .gradient_tolerance = 1e-4,
            .backward_tolerance = kBatchNormTolerance});
}

// The moving statistics after two training steps, computed here in double from the
// definition tensorpack's BatchNorm follows: the mean, and the unbiased variance
// sum (x - mean)^2 / (M - 1), each averaged into its EMA with the momentum.
TEST(Ops, BatchNormMovingStatisticsFollowTheUnbiasedBatchVariance) {
  for (const std::vector<std::int64_t>& dims : std::vector<std::vector<std::int64_t>>{{9, 5}, {3, 4, 2, 5}}) {
    Graph g(1);
    const Tensor x = placeholder(g, "x", f32(dims));
    BatchNorm("bn", x, {.momentum = 0.75f});
    const std::int64_t c = 5, m = f32(dims).numel() / c;
    std::vector<double> mean_ema(c, 0.0), var_ema(c, 1.0);
    Session session(g, device());
    for (std::uint64_t step = 0; step < 2; ++step) {
      const std::vector<float> values = random_floats(static_cast<std::size_t>(m * c), 20 + step, -3.0f, 5.0f);
      Array xv(DType::f32, Shape(dims));
      std::copy(values.begin(), values.end(), xv.data<float>().begin());
      session.run({{x, xv}}, {}, g.collection(kUpdateOps));
      for (std::int64_t ch = 0; ch < c; ++ch) {
        double mean = 0, squares = 0;
        for (std::int64_t r = 0; r < m; ++r) mean += values[static_cast<std::size_t>(r * c + ch)] / double(m);
        for (std::int64_t r = 0; r < m; ++r) squares += std::pow(values[static_cast<std::size_t>(r * c + ch)] - mean, 2);
        mean_ema[ch] = 0.75 * mean_ema[ch] + 0.25 * mean;
        var_ema[ch] = 0.75 * var_ema[ch] + 0.25 * squares / double(m - 1);
      }
    }
    const Array mean = session.variable("bn/mean/EMA"), var = session.variable("bn/variance/EMA");
    for (std::int64_t ch = 0; ch < c; ++ch) {
      EXPECT_NEAR(mean.data<float>()[ch], mean_ema[ch], 1e-6 * std::max(1.0, std::abs(mean_ema[ch]))) << ch;
      EXPECT_NEAR(var.data<float>()[ch], var_ema[ch], 1e-6 * std::max(1.0, var_ema[ch])) << "channel " << ch;
    }
  }
}

TEST(Ops, BatchNormOverVirtualBatches) {
  check_op({.name = "BatchNorm, virtual batches of 2",
            .inputs = {f32({8, 3, 2, 5})},
            .more_inputs = {{f32({6, 4})}},
            .build = [](Inputs& in) { return BatchNorm("bn", in[0], {.virtual_batch_size = 2}) * 1.5f; },
            .forward_tolerance = kBatchNormTolerance,
            .gradient_tolerance = 1e-4,
            .backward_tolerance = kBatchNormTolerance});
}

// TensorFlow's ghost batches, computed here in double: a batch of 8 in virtual batches of
// 4 is two batches, {0, 2, 4, 6} and {1, 3, 5, 7} (the batch seen as [4, 2, C]); each is
// normalised by its own mean and biased variance, and the averages follow the two
// batches' mean statistics. With ema_update internal they follow as well, without an
// update op in the collection (the output's program runs them); with skip they stay as
// they were.
TEST(Ops, BatchNormVirtualBatchesAreStridedAndTheirStatisticsAveraged) {
  constexpr std::int64_t m = 8, c = 3, v = 4, groups = m / v;
  const std::vector<float> values = random_floats(static_cast<std::size_t>(m * c), 61, -2.0f, 4.0f);
  for (const EmaUpdate ema : {EmaUpdate::collection, EmaUpdate::internal, EmaUpdate::skip}) {
    Graph g(1);
    const Tensor x = placeholder(g, "x", f32({m, c}));
    const Tensor y = BatchNorm("bn", x, {.momentum = 0.5f, .epsilon = 1e-3f, .virtual_batch_size = v, .ema_update = ema});
    EXPECT_EQ(g.collection(kUpdateOps).size(), ema == EmaUpdate::collection ? 2u : 0u);
    Session session(g, device());
    const Array got = session.run({{x, Array::from(Shape{m, c}, values)}}, {y}, g.collection(kUpdateOps))[0];
    for (std::int64_t ch = 0; ch < c; ++ch) {
      double mean_of_means = 0, mean_of_vars = 0;
      for (std::int64_t j = 0; j < groups; ++j) {
        double mean = 0, var = 0;
        for (std::int64_t a = 0; a < v; ++a) mean += values[static_cast<std::size_t>((a * groups + j) * c + ch)] / double(v);
        for (std::int64_t a = 0; a < v; ++a)
          var += std::pow(values[static_cast<std::size_t>((a * groups + j) * c + ch)] - mean, 2) / double(v);
        for (std::int64_t a = 0; a < v; ++a) {
          const std::size_t at = static_cast<std::size_t>((a * groups + j) * c + ch);
          const double want = (values[at] - mean) / std::sqrt(var + 1e-3);
          EXPECT_NEAR(got.data<float>()[at], want, 2e-5 * std::max(1.0, std::abs(want))) << at;
        }
        mean_of_means += mean / double(groups);
        mean_of_vars += var / double(groups);
      }
      const bool updated = ema != EmaUpdate::skip;
      EXPECT_NEAR(session.variable("bn/mean/EMA").data<float>()[ch], updated ? 0.5 * mean_of_means : 0.0, 1e-5);
      EXPECT_NEAR(session.variable("bn/variance/EMA").data<float>()[ch], updated ? 0.5 + 0.5 * mean_of_vars : 1.0, 1e-5);
    }
  }
  Graph g(1);
  EXPECT_THROW(BatchNorm("bn", placeholder(g, "x", f32({6, 3})), {.virtual_batch_size = 4}), Error);
}

// tensorpack's ema_update = internal: every training program that computes the output
// updates the averages, one that does not leaves them; two runs of the output equal two
// steps of the collection's update ops.
TEST(Ops, BatchNormInternalUpdatesRunWithEveryProgramOfTheOutput) {
  const std::vector<float> values = random_floats(6 * 4, 62, -1.0f, 3.0f);
  std::map<EmaUpdate, std::pair<Array, Array>> averages;
  for (const EmaUpdate ema : {EmaUpdate::collection, EmaUpdate::internal}) {
    Graph g(1);
    const Tensor x = placeholder(g, "x", f32({6, 4}));
    const Tensor other = reduce_sum(x * 2.0f);
    const Tensor y = BatchNorm("bn", x, {.momentum = 0.75f, .ema_update = ema});
    Session session(g, device());
    const Array batch = Array::from(Shape{6, 4}, values);
    session.run({{x, batch}}, {other});  // not the output: no update
    EXPECT_EQ(max_difference(session.variable("bn/mean/EMA"), Array::from(Shape{4}, std::vector<float>(4, 0.0f))),
              0.0f);
    for (int step = 0; step < 2; ++step) session.run({{x, batch}}, {y}, g.collection(kUpdateOps));
    averages[ema] = {session.variable("bn/mean/EMA"), session.variable("bn/variance/EMA")};
  }
  EXPECT_GT(max_difference(averages[EmaUpdate::internal].first, Array::from(Shape{4}, std::vector<float>(4, 0.0f))),
            0.1f);
  EXPECT_EQ(max_difference(averages[EmaUpdate::internal].first, averages[EmaUpdate::collection].first), 0.0f);
  EXPECT_EQ(max_difference(averages[EmaUpdate::internal].second, averages[EmaUpdate::collection].second), 0.0f);
}

TEST(Ops, BatchNormInferenceUsesMovingAverages) {
  check_op({.name = "BatchNorm inference",
            .inputs = {f32({7, 6})},
            .build = [](Inputs& in) {
              TowerContext inference(in[0].graph(), "", 0, false);
              return BatchNorm("bn", in[0], {.epsilon = 0.5f});
            }});
}

TEST(Ops, RegularizeCostSumsMatchingVariables) {
  check_op({.name = "regularize_cost",
            .inputs = {f32({3, 4})},
            .build = [](Inputs& in) {
              const Tensor y = FullyConnected("fc", in[0], 5, {.bias_initializer = constant(0.3f)});
              return y * 0.0f + regularize_cost(in[0].graph(), ".*/W", l2_regularizer(0.5f)) +
                     regularize_cost(in[0].graph(), "fc/b", l2_regularizer(2.0f));
            },
            .check_gradients = false});
}

TEST(Ops, L1RegularizerSumsAbsoluteValues) {
  check_op({.name = "l1_regularizer",
            .inputs = {f32({3, 4})},
            .build = [](Inputs& in) {
              const Tensor y = FullyConnected("fc", in[0], 5, {.bias_initializer = constant(-0.3f)});
              return y * 0.0f + regularize_cost(in[0].graph(), ".*", l1_regularizer(0.25f));
            },
            .check_gradients = false});
}

// PReLU: the input gradient is 1 above zero and alpha (0.2) below, both branches checked.
TEST(Ops, PReLULeaksAlphaTimesTheNegativePart) {
  check_op({.name = "PReLU", .inputs = {f32({5, 7})}, .build = [](Inputs& in) { return PReLU("prelu", in[0], 0.2f); }});
}

TEST(Ops, MaxoutTakesEachGroupsMaximum) {
  check_op({.name = "Maxout NHWC", .inputs = {f32({3, 4, 5, 6})}, .build = [](Inputs& in) { return Maxout(in[0], 3); }});
  check_op({.name = "Maxout FC", .inputs = {f32({7, 8})}, .build = [](Inputs& in) { return Maxout(in[0], 4); }});
  Graph g;
  EXPECT_THROW(Maxout(placeholder(g, "x", f32({kUnknown, 5})), 2), Error);
  EXPECT_THROW(Maxout(placeholder(g, "y", f32({kUnknown, kUnknown, 6})), 2), Error);
}

// The three by hand on the device, against values worked out here (check_op above
// holds the kernels to the reference graph; this holds the graphs to tensorpack's meaning).
TEST(Ops, PReLUMaxoutAndL1GiveTensorpacksValues) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 6}));
  const Tensor prelu = PReLU("prelu", x, 0.2f), maxout = Maxout(x, 3);
  get_variable(g, "w", {2, 2}, constant(-1.5f));
  const Tensor l1 = regularize_cost(g, "w", l1_regularizer(0.25f));
  Session s(g, device());
  const std::vector<Array> got =
      s.run({{x, Array::from(Shape{1, 6}, std::vector<float>{-2, 5, 0, 9, -0.5f, 4})}}, {prelu, maxout, l1});
  EXPECT_EQ(std::vector<float>(got[0].data<float>().begin(), got[0].data<float>().end()),
            (std::vector<float>{-0.4f, 5, 0, 9, -0.1f, 4}));
  EXPECT_EQ(std::vector<float>(got[1].data<float>().begin(), got[1].data<float>().end()), (std::vector<float>{5, 9}));
  EXPECT_FLOAT_EQ(got[2].data<float>()[0], 0.25f * 4 * 1.5f);
}

// What regularize_cost added, summed from the collection: 0.25 sum|w| + 0.5 sum(w^2) / 2
// for w = -1.5 four times is 1.5 + 2.25; 0 before anything is added, and in inference.
TEST(Ops, RegularizeCostFromCollectionSumsEveryAddedLoss) {
  Graph g;
  const Tensor none = regularize_cost_from_collection(g, "nothing");
  get_variable(g, "w", {2, 2}, constant(-1.5f));
  regularize_cost(g, "w", l1_regularizer(0.25f));
  regularize_cost(g, "w", l2_regularizer(0.5f));
  const Tensor total = regularize_cost_from_collection(g);
  Tensor inference;
  {
    TowerContext predicting(g, "InferenceTower", 0, false);
    inference = regularize_cost_from_collection(g);  // 0 outside training, as tensorpack's
  }
  Session s(g, device());
  const std::vector<Array> got = s.run({}, {none, total, inference});
  EXPECT_EQ(got[0].data<float>()[0], 0.0f);
  EXPECT_FLOAT_EQ(got[1].data<float>()[0], 1.5f + 2.25f);
  EXPECT_EQ(got[2].data<float>()[0], 0.0f);
}

// Inputs in [-3, 9): every channel's batch sd (about 3.5) is past rmax = 2 and its mean
// (about 3) past dmax = 0.5 from the renorm averages' first values (0 and 1), so r and d
// sit on their clips and finite differences, which cannot see stop_gradient, agree with
// the rule that leaves them out.
TEST(Ops, BatchRenormTrainingCorrectsTowardsTheAverages) {
  check_op({.name = "BatchRenorm training",
            .inputs = {f32({4, 3, 5, 6})},
            .more_inputs = {{f32({40, 7})}},
            .build = [](Inputs& in) { return BatchRenorm("brn", in[0], 2.0f, 0.5f) * 1.5f; },
            .low = -3.0f,
            .high = 9.0f,
            .forward_tolerance = kBatchNormTolerance,
            .gradient_tolerance = 1e-4,
            .backward_tolerance = kBatchNormTolerance});
  check_op({.name = "BatchRenorm inference",
            .inputs = {f32({7, 6})},
            .build = [](Inputs& in) {
              TowerContext inference(in[0].graph(), "", 0, false);
              return BatchRenorm("brn", in[0], 3.0f, 5.0f, {.epsilon = 0.5f});
            }});
}

// Two training steps computed here in double from the definition (TensorFlow's renorm,
// which tensorpack's BatchRenorm calls): the outputs with r and d clipped against the
// averages as they were before each step, then the four averages after both.
TEST(Ops, BatchRenormGivesTheDefinitionsValuesAndAverages) {
  constexpr std::int64_t m = 12, c = 3;
  constexpr double rmax = 1.5, dmax = 0.25, eps = 1e-3;
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({m, c}));
  const Tensor y = BatchRenorm("brn", x, float(rmax), float(dmax), {.momentum = 0.75f, .epsilon = float(eps),
                                                                    .renorm_momentum = 0.5f});
  // d cost / d x for cost = sum(y * w): r scales batch norm's gradient, and nothing flows
  // through r itself (unclipped in the first step: sd_B about 1.15 < rmax).
  const Tensor w = placeholder(g, "w", f32({m, c}));
  const Tensor dx = gradients(reduce_sum(mul(y, w)), {x})[0];
  const std::vector<float> wv = random_floats(static_cast<std::size_t>(m * c), 39);
  Session session(g, device());
  std::vector<double> mean_r(c, 0.0), sd_r(c, 1.0), mean_ema(c, 0.0), var_ema(c, 1.0);
  for (std::uint64_t step = 0; step < 2; ++step) {
    const std::vector<float> values = random_floats(static_cast<std::size_t>(m * c), 40 + step, -1.0f + float(step), 3.0f);
    const std::vector<Array> run = session.run({{x, Array::from(Shape{m, c}, values)}, {w, Array::from(Shape{m, c}, wv)}},
                                               {y, dx}, g.collection(kUpdateOps));
    const Array& got = run[0];
    for (std::int64_t ch = 0; ch < c; ++ch) {
      double mean = 0, var = 0;
      for (std::int64_t i = 0; i < m; ++i) mean += values[static_cast<std::size_t>(i * c + ch)] / double(m);
      for (std::int64_t i = 0; i < m; ++i) var += std::pow(values[static_cast<std::size_t>(i * c + ch)] - mean, 2) / double(m);
      const double sd = std::sqrt(var + eps), floor_sd = std::max(sd_r[ch], std::sqrt(eps));
      const double r = std::clamp(sd / floor_sd, 1 / rmax, rmax), d = std::clamp((mean - mean_r[ch]) / floor_sd, -dmax, dmax);
      double mean_w = 0, mean_wx = 0;
      for (std::int64_t i = 0; i < m; ++i) {
        const std::size_t at = static_cast<std::size_t>(i * c + ch);
        const double want = (values[at] - mean) / sd * r + d;  // gamma 1, beta 0
        EXPECT_NEAR(got.data<float>()[at], want, 2e-5 * std::max(1.0, std::abs(want))) << step << " " << i;
        mean_w += wv[at] / double(m);
        mean_wx += wv[at] * (values[at] - mean) / sd / double(m);
      }
      for (std::int64_t i = 0; i < m && step == 0; ++i) {
        const std::size_t at = static_cast<std::size_t>(i * c + ch);
        ASSERT_LT(r, rmax);
        const double want = r / sd * (wv[at] - mean_w - (values[at] - mean) / sd * mean_wx);
        EXPECT_NEAR(run[1].data<float>()[at], want, 2e-5 * std::max(1.0, std::abs(want))) << "gradient " << i;
      }
      mean_r[ch] = 0.5 * mean_r[ch] + 0.5 * mean;
      sd_r[ch] = 0.5 * sd_r[ch] + 0.5 * sd;
      mean_ema[ch] = 0.75 * mean_ema[ch] + 0.25 * mean;
      var_ema[ch] = 0.75 * var_ema[ch] + 0.25 * var;
    }
  }
  const auto expect_variable = [&](const std::string& name, const std::vector<double>& want) {
    const Array got = session.variable(name);
    for (std::int64_t ch = 0; ch < c; ++ch)
      EXPECT_NEAR(got.data<float>()[ch], want[ch], 1e-5 * std::max(1.0, std::abs(want[ch]))) << name << " " << ch;
  };
  expect_variable("brn/renorm_mean", mean_r);
  expect_variable("brn/renorm_stddev", sd_r);
  expect_variable("brn/mean/EMA", mean_ema);
  expect_variable("brn/variance/EMA", var_ema);
  EXPECT_THROW(BatchRenorm("bad", x, 0.5f, 0.0f), Error);
}

TEST(Ops, FixedUnPoolingIsTheKroneckerProductWithItsMatrix) {
  check_op({.name = "FixedUnPooling, top-left",
            .inputs = {f32({2, 3, 4, 5})},
            .build = [](Inputs& in) { return FixedUnPooling("unpool", in[0], {2, 2}); }});
  check_op({.name = "FixedUnPooling, a 2 x 3 matrix",
            .inputs = {f32({3, 5, 2, 7})},
            .build = [](Inputs& in) {
              return FixedUnPooling("unpool", in[0], {2, 3}, Array::from(Shape{2, 3}, std::vector<float>{1, -2, 0.5f, 3, 0, 1}));
            }});
  // By hand: x = [[1, 2], [3, 4]] (one image, one channel), matrix [[1, 2], [3, 4]].
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 2, 2, 1}));
  const Tensor kron = FixedUnPooling("a", x, {2, 2}, Array::from(Shape{2, 2}, std::vector<float>{1, 2, 3, 4}));
  const Tensor corner = FixedUnPooling("b", x, {2, 2});
  Session s(g, device());
  const std::vector<Array> got = s.run({{x, Array::from(Shape{1, 2, 2, 1}, std::vector<float>{1, 2, 3, 4})}}, {kron, corner});
  EXPECT_EQ(got[0].shape(), (Shape{1, 4, 4, 1}));
  EXPECT_EQ(std::vector<float>(got[0].data<float>().begin(), got[0].data<float>().end()),
            (std::vector<float>{1, 2, 2, 4, 3, 4, 6, 8, 3, 6, 4, 8, 9, 12, 12, 16}));
  EXPECT_EQ(std::vector<float>(got[1].data<float>().begin(), got[1].data<float>().end()),
            (std::vector<float>{1, 0, 2, 0, 0, 0, 0, 0, 3, 0, 4, 0, 0, 0, 0, 0}));
  EXPECT_THROW(FixedUnPooling("c", x, {2, 2}, Array::from(Shape{3, 2}, std::vector<float>(6, 1.0f))), Error);
  EXPECT_THROW(FixedUnPooling("d", placeholder(g, "flat", f32({kUnknown, 4})), {2, 2}), Error);
}

// LinearWrap builds what the same layers called one by one build: the same variables (by
// name and type) with the same initial values, and the same output on the same input.
TEST(LinearWrap, BuildsWhatTheLayersCalledInTurnBuild) {
  const auto relu6 = [](Tensor t, float cap) { return minimum(relu(t), scalar(t.graph(), cap)); };
  const auto chained = [&](Tensor x) {
    return LinearWrap(x)
        .Conv2D("conv0", 4, {3, 3})
        .BNReLU("bn0")
        .MaxPooling("pool0", {2, 2})
        .apply(relu6, 6.0f)
        .PReLU("prelu")
        .FullyConnected("fc0", 6)
        .Maxout(2)
        .FullyConnected("fc1", 5)();
  };
  const auto in_turn = [&](Tensor x) {
    Tensor t = Conv2D("conv0", x, 4, {3, 3});
    t = BNReLU("bn0", t);
    t = MaxPooling("pool0", t, {2, 2});
    t = relu6(t, 6.0f);
    t = PReLU("prelu", t);
    t = FullyConnected("fc0", t, 6);
    t = Maxout(t, 2);
    return FullyConnected("fc1", t, 5);
  };
  Array input(DType::f32, Shape{2, 6, 6, 3});
  Rng rng(3);
  for (float& v : input.data<float>()) v = rng.normal();
  std::vector<Array> outputs;
  std::vector<std::vector<std::string>> names(2);
  for (int way = 0; way < 2; ++way) {
    Graph g(11);
    const Tensor x = placeholder(g, "x", f32({2, 6, 6, 3}));
    Tensor y;
    {
      TowerContext training(g, "", 0, true);
      y = way == 0 ? chained(x) : in_turn(x);
    }
    for (const Tensor& v : g.variables())
      names[static_cast<std::size_t>(way)].push_back(std::get<VariableAttrs>(v.node().attrs).var_name + " " +
                                                     to_string(v.type()));
    Session s(g, device());
    outputs.push_back(s.run({{x, input}}, {y})[0]);
  }
  EXPECT_EQ(names[0], names[1]);
  EXPECT_EQ(outputs[0].shape().dims(), (std::vector<std::int64_t>{2, 5}));
  ASSERT_EQ(outputs[0].shape(), outputs[1].shape());
  EXPECT_EQ(0, std::memcmp(outputs[0].bytes().data(), outputs[1].bytes().data(), outputs[0].nbytes()));
}

}  // namespace
}  // namespace vkp::test
