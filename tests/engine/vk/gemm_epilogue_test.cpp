// GEMM epilogues (shaders/epilogue.glsl) against the GEMM's double-precision reference
// followed by the epilogue in double: bias, residual, each activation, each gate, on
// both kernel variants and, on the CPU path, in both orientations (a narrow product
// runs as C^T, where the bias runs along the run's rows).
//
// Tolerance: the GEMM test's bound on v (gemm_test.cpp) with the bias and residual
// added to the magnitude, carried through the activation by its largest slope on the
// way (1 for relu, leaky relu with slope <= 1 and tanh, 1/4 for sigmoid, max(1, alpha)
// for elu, 1.13 for gelu) or through a gate by |f'|; plus the function's own rounding: 2^-20 of the
// result, as the elementwise tests allow exp, and for a gate 2^-22 |v| more, the
// float rounding of f' itself (1 - y * y cancels where |y| is near 1).
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "reference.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/kernels/gemm.h"

namespace vkp::test {
namespace {

using vk::BinaryOp;
using vk::UnaryOp;

double activate(UnaryOp f, double v, double alpha) {
  switch (f) {
    case UnaryOp::relu: return v > 0 ? v : 0.0;
    case UnaryOp::sigmoid: return 1.0 / (1.0 + std::exp(-v));
    case UnaryOp::tanh: return std::tanh(v);
    case UnaryOp::leaky_relu: return v > 0 ? v : alpha * v;
    case UnaryOp::elu: return v > 0 ? v : alpha * std::expm1(v);
    case UnaryOp::gelu: return v * 0.5 * std::erfc(-v / std::sqrt(2.0));
    default: break;
  }
  ADD_FAILURE() << "no activation";
  return v;
}

double slope_bound(UnaryOp f, double alpha) {
  if (f == UnaryOp::gelu) return 1.13;  // gelu' peaks at 1.129 (x = sqrt 2)
  return f == UnaryOp::sigmoid ? 0.25 : f == UnaryOp::elu ? std::max(1.0, alpha) : std::max(1.0, std::abs(alpha));
}

// The gradient function's factor f'(u), u as BinaryOp names it.
double gate_factor(BinaryOp g, double u, double alpha) {
  switch (g) {
    case BinaryOp::relu_grad: return u > 0 ? 1.0 : 0.0;
    case BinaryOp::sigmoid_grad: return u * (1.0 - u);
    case BinaryOp::tanh_grad: return 1.0 - u * u;
    case BinaryOp::leaky_relu_grad: return u > 0 ? 1.0 : alpha;
    case BinaryOp::elu_grad: return u > 0 ? 1.0 : alpha * std::exp(u);
    case BinaryOp::gelu_grad: return 0.5 * std::erfc(-u / std::sqrt(2.0)) + u * std::exp(-0.5 * u * u) / std::sqrt(2 * M_PI);
    default: break;
  }
  ADD_FAILURE() << "no gate";
  return 1.0;
}

struct EpilogueCase {
  std::uint32_t m, n, k;
  bool bias = false, residual = false;
  std::optional<UnaryOp> activation;
  std::optional<BinaryOp> gate;
  float alpha = 0.0f;
};

class GemmEpilogue : public VkTest, public ::testing::WithParamInterface<vk::KernelChoice> {
 protected:
  void check(const EpilogueCase& e, std::uint64_t seed) {
    vk::GemmArgs args;
    args.m = e.m;
    args.n = e.n;
    args.k = e.k;
    args.choice = GetParam();
    const std::size_t mn = std::size_t{e.m} * e.n;
    const std::vector<float> a = random_floats(std::size_t{e.m} * e.k, seed), b = random_floats(std::size_t{e.k} * e.n, seed + 1);
    const std::vector<float> bias = random_floats(e.n, seed + 2), extra = random_floats(mn, seed + 3);
    std::vector<double> v(mn, 0.0), magnitude;
    gemm_reference(args, a, b, v, magnitude);
    vk::GemmEpilogue epilogue;
    if (e.bias) epilogue.bias = upload(bias);
    if (e.residual) epilogue.residual = upload(extra);
    if (e.gate) {
      epilogue.gate = upload(extra);
      epilogue.gate_fn = e.gate;
      epilogue.gate_alpha = e.alpha;
    }
    epilogue.activation = e.activation;
    epilogue.activation_alpha = e.alpha;
    std::vector<double> want(mn), tolerance(mn);
    for (std::size_t i = 0; i < mn; ++i) {
      double x = v[i], mag = magnitude[i];
      if (e.bias) x += bias[i % e.n], mag += std::abs(bias[i % e.n]);
      if (e.residual) x += extra[i], mag += std::abs(extra[i]);
      double tol = 8.0 * std::sqrt(e.k + 4.0) * std::ldexp(1.0, -24) * mag;
      if (e.activation) {
        x = activate(*e.activation, x, e.alpha);
        tol *= slope_bound(*e.activation, e.alpha);
      }
      if (e.gate) {
        const double factor = gate_factor(*e.gate, extra[i], e.alpha);
        tol = tol * std::abs(factor) + std::ldexp(std::abs(x), -22);
        x *= factor;
      }
      want[i] = x;
      tolerance[i] = tol + std::ldexp(std::abs(x), -20) + 1e-30;
    }
    const vk::BufferSlice da = upload(a), db = upload(b), dc = upload(std::vector<float>(mn, std::nanf("")));
    const vk::BufferSlice work = arena().allocate(std::max<std::size_t>(vk::gemm_workspace_bytes(args, device()), 4), "work");
    vk::Recording recording(device(), {.name = "gemm epilogue test"});
    vk::gemm(recording, args, {da, db, dc, work}, epilogue);
    recording.finish();
    recording.run();
    EXPECT_EQ(compare(download(dc, mn), want, tolerance), "");
  }
};

// 33 x 70 runs as C on the CPU path, 2049 x 3 as C^T.
constexpr std::uint32_t kShapes[][3] = {{33, 70, 19}, {2049, 3, 5}};

TEST_P(GemmEpilogue, BiasAndEachActivation) {
  std::uint64_t seed = 1;
  for (const auto& s : kShapes)
    for (const auto& [f, alpha] : {std::pair{UnaryOp::relu, 0.0f}, {UnaryOp::sigmoid, 0.0f}, {UnaryOp::tanh, 0.0f},
                                   {UnaryOp::leaky_relu, 0.1f}, {UnaryOp::elu, 0.7f}, {UnaryOp::gelu, 0.0f}}) {
      SCOPED_TRACE(std::string(vk::to_string(f)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]));
      check({.m = s[0], .n = s[1], .k = s[2], .bias = true, .activation = f, .alpha = alpha}, seed += 10);
    }
}

TEST_P(GemmEpilogue, BiasResidualAndRelu) {
  for (const auto& s : kShapes) {
    check({.m = s[0], .n = s[1], .k = s[2], .bias = true}, 100 + s[0]);
    check({.m = s[0], .n = s[1], .k = s[2], .residual = true}, 200 + s[0]);
    check({.m = s[0], .n = s[1], .k = s[2], .bias = true, .residual = true, .activation = UnaryOp::relu}, 300 + s[0]);
  }
}

TEST_P(GemmEpilogue, EachGate) {
  std::uint64_t seed = 500;
  for (const auto& s : kShapes)
    for (const auto& [g, alpha] : {std::pair{BinaryOp::relu_grad, 0.0f}, {BinaryOp::sigmoid_grad, 0.0f},
                                   {BinaryOp::tanh_grad, 0.0f}, {BinaryOp::leaky_relu_grad, 0.1f},
                                   {BinaryOp::elu_grad, 0.7f}, {BinaryOp::gelu_grad, 0.0f}}) {
      SCOPED_TRACE(std::string(vk::to_string(g)) + " " + std::to_string(s[0]) + "x" + std::to_string(s[1]));
      check({.m = s[0], .n = s[1], .k = s[2], .gate = g, .alpha = alpha}, seed += 10);
    }
}

INSTANTIATE_TEST_SUITE_P(Both, GemmEpilogue, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

TEST(GemmEpiloguePlan, TheShapesRunInBothOrientations) {
  vk::GemmArgs args;
  args.m = kShapes[0][0], args.n = kShapes[0][1], args.k = kShapes[0][2];
  EXPECT_FALSE(vk::gemm_cpu_transposes(args)) << "33x70x19";
  args.m = kShapes[1][0], args.n = kShapes[1][1], args.k = kShapes[1][2];
  EXPECT_TRUE(vk::gemm_cpu_transposes(args));
}

class GemmEpilogueErrors : public VkTest {};

TEST_F(GemmEpilogueErrors, AShortBiasAResidualWithAGateAndAnUnsupportedActivationAreErrors) {
  vk::GemmArgs args;
  args.m = 4, args.n = 5, args.k = 3;
  const vk::BufferSlice s = scratch(4096);
  vk::Recording recording(device());
  vk::GemmEpilogue short_bias;
  short_bias.bias = scratch(4);
  EXPECT_THROW(vk::gemm(recording, args, {s, s, s, s}, short_bias), Error);
  vk::GemmEpilogue both;
  both.residual = scratch(20);
  both.gate = scratch(20);
  both.gate_fn = BinaryOp::relu_grad;
  EXPECT_THROW(vk::gemm(recording, args, {s, s, s, s}, both), Error);
  vk::GemmEpilogue exp_act;
  exp_act.activation = UnaryOp::exp;
  EXPECT_THROW(vk::gemm(recording, args, {s, s, s, s}, exp_act), Error);
}

}  // namespace
}  // namespace vkp::test
