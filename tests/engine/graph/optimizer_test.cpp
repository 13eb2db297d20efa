// Optimizers on the device against their published update rules (TensorFlow's; see
// reference_optimizer in engine/graph/ops/state_ops.cpp), through values derived by hand:
// under a constant gradient g every rule has a closed form, computed here in double from
// the f32 hyperparameters the device holds.
//   sgd       w_k = w_{k-1} - lr g
//   momentum  a_k = g (1 - mu^k) / (1 - mu);  w_k = w_{k-1} - lr a_k
//   nesterov  w_k = w_{k-1} - lr (g + mu a_k)
//   adam      m_k = (1 - b1^k) g,  s_k = (1 - b2^k) g^2, so with TensorFlow's epsilon placement
//             w_k = w_{k-1} - lr sqrt(1 - b2^k) g / (sqrt(1 - b2^k) |g| + eps)
//   adamw     the same, then - lr wd w_{k-1}
//   rmsprop   ms_k = rho^k + (1 - rho^k) g^2 (the rms slot starts at 1, TensorFlow 1's);
//             mom_k = mu mom_{k-1} + lr g / sqrt(ms_k + eps);  w_k = w_{k-1} - mom_k
//   adagrad   acc_k = acc_0 + k g^2;  w_k = w_{k-1} - lr g / sqrt(acc_k)
// Tolerance after step k: 32 u sum_j |step_j| + 2 k u |w| (u = 2^-24): a few roundings per
// update and one per write of w. The f32 bias correction this replaced (lavapipe's pow a
// few ulps low) was 3e-6 to 6e-6 off per step here, 4 to 8 times that.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "vk_test_env.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

// Gradients of every size that matters, down to one near Adam's epsilon, where its
// placement decides the step (the paper's placement would give about 16 times this one).
const std::vector<float> kGradient = {0.5f, -3.0f, 1e-3f, -2e-8f, 1e-8f, 40.0f};
constexpr float kLearningRate = 0.1f, kMomentum = 0.8f, kWeightDecay = 0.05f;
constexpr float kBeta1 = 0.9f, kBeta2 = 0.999f, kEpsilon = 1e-8f;
constexpr float kRho = 0.9f, kRmsEpsilon = 1e-10f, kAdagradInitial = 0.25f;

// w after each of `steps` steps, by the closed forms above, from w = 1.
std::vector<std::vector<double>> closed_form(OptimizerKind kind, int steps, std::vector<std::vector<double>>& moves) {
  const double lr = kLearningRate, mu = kMomentum, b2 = kBeta2, eps = kEpsilon, wd = kWeightDecay;  // b1 cancels
  std::vector<std::vector<double>> out;
  std::vector<double> w(kGradient.size(), 1.0), mom(kGradient.size(), 0.0);
  moves.assign(kGradient.size(), {});
  for (int k = 1; k <= steps; ++k) {
    for (std::size_t i = 0; i < w.size(); ++i) {
      const double g = kGradient[i], a = g * (1 - std::pow(mu, k)) / (1 - mu), c2 = std::sqrt(1 - std::pow(b2, k));
      double step = 0;
      switch (kind) {
        case OptimizerKind::sgd: step = lr * g; break;
        case OptimizerKind::momentum: step = lr * a; break;
        case OptimizerKind::nesterov: step = lr * (g + mu * a); break;
        case OptimizerKind::adam: step = lr * c2 * g / (c2 * std::abs(g) + eps); break;
        case OptimizerKind::adamw: step = lr * c2 * g / (c2 * std::abs(g) + eps) + lr * wd * w[i]; break;
        case OptimizerKind::rmsprop: {
          const double rho = kRho, ms = std::pow(rho, k) + (1 - std::pow(rho, k)) * g * g;
          mom[i] = mu * mom[i] + lr * g / std::sqrt(ms + double{kRmsEpsilon});
          step = mom[i];
          break;
        }
        case OptimizerKind::adagrad: step = lr * g / std::sqrt(double{kAdagradInitial} + k * g * g); break;
      }
      w[i] -= step;
      moves[i].push_back(std::abs(step));
    }
    out.push_back(w);
  }
  return out;
}

Optimizer make(Graph& g, OptimizerKind kind) {
  switch (kind) {
    case OptimizerKind::sgd: return sgd(g, kLearningRate);
    case OptimizerKind::momentum: return momentum(g, kLearningRate, kMomentum);
    case OptimizerKind::nesterov: return momentum(g, kLearningRate, kMomentum, true);
    case OptimizerKind::adam: return adam(g, kLearningRate, kBeta1, kBeta2, kEpsilon);
    case OptimizerKind::adamw: return adamw(g, kLearningRate, kWeightDecay, kBeta1, kBeta2, kEpsilon);
    case OptimizerKind::rmsprop: return rmsprop(g, kLearningRate, kRho, kMomentum, kRmsEpsilon);
    case OptimizerKind::adagrad: return adagrad(g, kLearningRate, kAdagradInitial);
  }
  throw std::logic_error("kind");
}

// Six elements take the one-at-a-time path; twelve (the gradients twice) take whole vec4s,
// and on a CPU device the texel build, which reads the arrays through texel views.
TEST(Optimizers, FiveStepsUnderAConstantGradientMatchTheClosedForms) {
  const char* names[] = {"sgd", "momentum", "nesterov", "adam", "adamw", "rmsprop", "adagrad"};
  for (std::size_t copies : {1, 2})
    for (OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::momentum, OptimizerKind::nesterov,
                               OptimizerKind::adam, OptimizerKind::adamw, OptimizerKind::rmsprop,
                               OptimizerKind::adagrad}) {
      SCOPED_TRACE(std::string(names[static_cast<int>(kind)]) + ", " + std::to_string(copies) + " copies");
      Graph g(1);
      const std::size_t size = kGradient.size() * copies;
      const auto n = static_cast<std::int64_t>(size);
      const Tensor w = get_variable(g, "w", {n}, ones());
      Array grad(DType::f32, Shape{n});
      for (std::size_t i = 0; i < size; ++i) grad.data<float>()[i] = kGradient[i % kGradient.size()];
      const std::vector<Tensor> step = make(g, kind).apply_gradients({{constant(g, grad, "g"), w}});
      Session session(g, device());
      std::vector<std::vector<double>> moves;
      const std::vector<std::vector<double>> want = closed_form(kind, 5, moves);
      const double u = std::ldexp(1.0, -24);
      for (int k = 1; k <= 5; ++k) {
        session.run({}, {}, step);
        const Array got = session.variable("w");
        for (std::size_t e = 0; e < size; ++e) {
          const std::size_t i = e % kGradient.size();
          double moved = 0;
          for (int j = 0; j < k; ++j) moved += moves[i][static_cast<std::size_t>(j)];
          const double expected = want[static_cast<std::size_t>(k - 1)][i];
          const double tolerance = 32 * u * moved + 2 * k * u * std::abs(expected);
          EXPECT_LE(std::abs(got.data<float>()[e] - expected), tolerance)
              << "step " << k << ", w[" << e << "] (gradient " << kGradient[i] << "): " << got.data<float>()[e]
              << ", closed form " << expected;
        }
      }
    }
}

// The factor is the exact one rounded once: at t = 1..5, and far along.
TEST(Optimizers, AdamStepFactorIsTheNearestFloatToTheExactOne) {
  for (std::uint64_t t : {1ull, 2ull, 3ull, 4ull, 5ull, 1000ull, 1000000ull}) {
    const double exact = double{0.001f} * std::sqrt(1 - std::pow(double{0.999f}, double(t))) /
                         (1 - std::pow(double{0.9f}, double(t)));
    const float got = adam_step_factor(0.001f, 0.9f, 0.999f, t);
    EXPECT_LE(std::abs(got - exact), std::abs(std::nextafter(got, 1.0f) - got) / 2) << "t = " << t;
  }
}

// TensorFlow 1's slot names and initial values: what a checkpoint mapping relies on.
TEST(Optimizers, RmspropAndAdagradSlotsAreNamedAndInitializedAsTensorFlows) {
  Graph g(1);
  const Tensor w = get_variable(g, "dense/W", {3}, ones());
  const Tensor v = get_variable(g, "dense/b", {3}, ones());
  const Tensor grad = constant(g, Array::from(Shape{3}, std::vector<float>{1, 2, 3}), "g");
  rmsprop(g, 0.1f).apply_gradients({{grad, w}});
  adagrad(g, 0.1f, 0.3f).apply_gradients({{grad, v}});
  Session session(g, device());
  EXPECT_EQ(session.variable("dense/W/RMSProp").data<float>()[0], 1.0f);
  EXPECT_EQ(session.variable("dense/W/RMSProp_1").data<float>()[0], 0.0f);
  EXPECT_EQ(session.variable("dense/b/Adagrad").data<float>()[2], 0.3f);
  EXPECT_THROW(adagrad(g, 0.1f, 0.0f), Error);
  EXPECT_THROW(rmsprop(g, 0.1f, 1.5f), Error);
}

// accumulate_gradients(sgd, 3): nothing moves on runs 1, 2, 4, 5 (bit for bit); runs 3
// and 6 apply the float32 sum of their three gradients, which this test forms in the same
// order. The update w - lr * sum is one rounding off where the device fuses it into a
// multiply-add (NVIDIA's driver does; lavapipe does not), so it is compared within that.
TEST(Optimizers, AccumulatedGradientsApplyTheSumEveryKthRun) {
  Graph g(1);
  const Tensor w = get_variable(g, "w", {4}, ones());
  const Tensor feed = placeholder(g, "g", f32({4}));
  const std::vector<Tensor> train = accumulate_gradients(sgd(g, 0.1f), 3).minimize(reduce_sum(w * feed));
  Session session(g, device());
  std::vector<float> want(4, 1.0f), sum(4, 0.0f), step(4, 0.0f);
  std::vector<float> before = want;
  for (int run = 1; run <= 6; ++run) {
    const std::vector<float> gv = random_floats(4, static_cast<std::uint64_t>(run), -2.0f, 2.0f);
    session.run({{feed, Array::from(Shape{4}, gv)}}, {}, train);
    for (std::size_t i = 0; i < 4; ++i) sum[i] += gv[i];
    const bool applies = run % 3 == 0;
    if (applies) {
      for (std::size_t i = 0; i < 4; ++i) step[i] = 0.1f * sum[i], want[i] -= step[i];
      sum.assign(4, 0.0f);
    }
    const Array got_array = session.variable("w");
    const std::vector<float> got(got_array.data<float>().begin(), got_array.data<float>().end());
    if (!applies) {
      EXPECT_EQ(got, before) << "run " << run << " moved w";
    }
    for (std::size_t i = 0; applies && i < 4; ++i)
      EXPECT_NEAR(got[i], want[i], std::ldexp(1.0, -23) * (std::abs(want[i]) + std::abs(step[i])))
          << "run " << run << ", element " << i;
    before = got;
    EXPECT_EQ(session.variable("AccumGrad/counter").data<float>()[0], static_cast<float>(run % 3)) << "run " << run;
  }
  EXPECT_THROW(accumulate_gradients(sgd(g, 0.1f), 0), Error);
}

}  // namespace
}  // namespace vkp::test
