// Unary and binary kernels against the double-precision reference on random data.
// Tolerances per op (relative to max(1, |reference|)): exact ops 0; exp, log, sqrt,
// rsqrt, sigmoid, tanh, div and pow 2^-20 (Vulkan allows a few ulp for these). The
// checker's power is tested too (ElementwiseChecker).
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "reference.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/kernels/elementwise.h"

namespace vkp::test {
namespace {

constexpr std::size_t kSizes[] = {1, 2, 7, 63, 65, 257, 1030, 1031, 100003};  // every n % 4

double tolerance(vk::UnaryOp op) {
  switch (op) {
    case vk::UnaryOp::relu:
    case vk::UnaryOp::neg:
    case vk::UnaryOp::abs: return 0.0;
    case vk::UnaryOp::square: return std::ldexp(1.0, -24);  // one rounding
    default: return std::ldexp(1.0, -20);
  }
}

double tolerance(vk::BinaryOp op) {
  switch (op) {
    case vk::BinaryOp::max:
    case vk::BinaryOp::min: return 0.0;
    case vk::BinaryOp::add:
    case vk::BinaryOp::sub:
    case vk::BinaryOp::mul: return std::ldexp(1.0, -24);
    default: return std::ldexp(1.0, -20);
  }
}

// The alpha the reference (reference.cpp) assumes.
float alpha_for(vk::UnaryOp op) { return op == vk::UnaryOp::leaky_relu ? 0.2f : 1.0f; }

// Inputs inside the op's domain: positive for log, sqrt and rsqrt.
std::vector<float> inputs_for(vk::UnaryOp op, std::size_t n, std::uint64_t seed) {
  const bool positive = op == vk::UnaryOp::log || op == vk::UnaryOp::sqrt || op == vk::UnaryOp::rsqrt;
  return positive ? random_floats(n, seed, 0.01f, 10.0f) : random_floats(n, seed, -6.0f, 6.0f);
}

// Per element: tol * max(1, |reference|).
std::vector<double> tolerances(const std::vector<double>& want, double tol) {
  std::vector<double> out;
  out.reserve(want.size());
  for (double w : want) out.push_back(tol * std::max(1.0, std::abs(w)));
  return out;
}

void expect_close(const std::vector<float>& got, const std::vector<double>& want, double tol, const std::string& what) {
  EXPECT_EQ(compare(got, want, tolerances(want, tol)), "") << what;
}

// The checker rejects zeros, an element beyond its tolerance and a transposed result, for
// an exact op (tolerance 0) and an approximate one.
TEST(ElementwiseChecker, RejectsZerosAnElementBeyondItsToleranceAndATransposedResult) {
  const std::vector<float> x = random_floats(7 * 13, 4, -6.0f, 6.0f), y = random_floats(7 * 13, 5, -6.0f, 6.0f);
  for (vk::UnaryOp op : {vk::UnaryOp::abs, vk::UnaryOp::exp, vk::UnaryOp::tanh}) {
    std::vector<double> want;
    for (float v : x) want.push_back(unary_reference(op, v));
    expect_checker_rejects(want, tolerances(want, tolerance(op)), 7, 13, std::string(vk::to_string(op)));
  }
  for (vk::BinaryOp op : {vk::BinaryOp::max, vk::BinaryOp::mul, vk::BinaryOp::div}) {
    std::vector<double> want;
    for (std::size_t i = 0; i < x.size(); ++i) want.push_back(binary_reference(op, x[i], y[i]));
    expect_checker_rejects(want, tolerances(want, tolerance(op)), 7, 13, std::string(vk::to_string(op)));
  }
}

class Unary : public VkTest, public ::testing::WithParamInterface<vk::UnaryOp> {};

TEST_P(Unary, MatchesReferenceAtAwkwardSizes) {
  const vk::UnaryOp op = GetParam();
  for (std::size_t n : kSizes) {
    const std::vector<float> x = inputs_for(op, n, n);
    const vk::BufferSlice dx = upload(x), dy = scratch(n);
    vk::Recording recording(device());
    vk::unary(recording, op, n, dx, dy, alpha_for(op));
    recording.finish();
    recording.run();
    std::vector<double> want(n);
    for (std::size_t i = 0; i < n; ++i) want[i] = unary_reference(op, x[i]);
    expect_close(download(dy, n), want, tolerance(op), std::string(vk::to_string(op)) + " n=" + std::to_string(n));
  }
}

TEST_P(Unary, RunsInPlace) {
  const vk::UnaryOp op = GetParam();
  const std::vector<float> x = inputs_for(op, 300, 3);
  const vk::BufferSlice d = upload(x);
  vk::Recording recording(device());
  vk::unary(recording, op, x.size(), d, d, alpha_for(op));
  recording.finish();
  recording.run();
  std::vector<double> want(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) want[i] = unary_reference(op, x[i]);
  expect_close(download(d, x.size()), want, tolerance(op), "in place");
}

INSTANTIATE_TEST_SUITE_P(
    Ops, Unary,
    ::testing::Values(vk::UnaryOp::relu, vk::UnaryOp::sigmoid, vk::UnaryOp::tanh, vk::UnaryOp::exp, vk::UnaryOp::log,
                      vk::UnaryOp::sqrt, vk::UnaryOp::rsqrt, vk::UnaryOp::neg, vk::UnaryOp::abs, vk::UnaryOp::square,
                      vk::UnaryOp::leaky_relu, vk::UnaryOp::elu, vk::UnaryOp::gelu, vk::UnaryOp::floor, vk::UnaryOp::round),
    [](const auto& p) { return std::string(vk::to_string(p.param)); });

TEST_F(VkTest, SigmoidAndTanhSaturateWithoutOverflow) {
  const std::vector<float> x = {-1000.0f, -90.0f, 90.0f, 1000.0f};
  const vk::BufferSlice dx = upload(x), ds = scratch(4), dt = scratch(4);
  vk::Recording recording(device());
  vk::unary(recording, vk::UnaryOp::sigmoid, 4, dx, ds);
  vk::unary(recording, vk::UnaryOp::tanh, 4, dx, dt);
  recording.finish();
  recording.run();
  EXPECT_EQ(download(ds, 4), (std::vector<float>{0.0f, 0.0f, 1.0f, 1.0f}));
  EXPECT_EQ(download(dt, 4), (std::vector<float>{-1.0f, -1.0f, 1.0f, 1.0f}));
}

struct BroadcastCase {
  Shape a, b;
};

class Binary : public VkTest, public ::testing::WithParamInterface<vk::BinaryOp> {
 protected:
  void check(vk::BinaryOp op, const Shape& sa, const Shape& sb, std::uint64_t seed) {
    // pow: positive bases with any exponent, plus negative bases with integral ones below.
    const bool pow = op == vk::BinaryOp::pow;
    const std::vector<float> a = random_floats(static_cast<std::size_t>(sa.numel()), seed, pow ? 0.1f : -4.0f, 4.0f);
    std::vector<float> b = random_floats(static_cast<std::size_t>(sb.numel()), seed + 1, -3.0f, 3.0f);
    if (op == vk::BinaryOp::div)
      for (float& v : b) v = v < 0 ? v - 0.25f : v + 0.25f;  // away from zero
    const Shape out = broadcast_shapes(sa, sb);
    const vk::BufferSlice da = upload(a), db = upload(b), dc = scratch(static_cast<std::size_t>(out.numel()));
    vk::Recording recording(device());
    vk::binary(recording, op, {sa, da}, {sb, db}, dc);
    recording.finish();
    recording.run();
    expect_close(download(dc, static_cast<std::size_t>(out.numel())), broadcast_reference(op, sa, a, sb, b),
                 tolerance(op), std::string(vk::to_string(op)) + " " + to_string(sa) + " with " + to_string(sb));
  }
};

TEST_P(Binary, SameShapesAtAwkwardSizes) {
  for (std::size_t n : kSizes) check(GetParam(), Shape{static_cast<std::int64_t>(n)}, Shape{static_cast<std::int64_t>(n)}, n);
}

TEST_P(Binary, BroadcastsLikeNumpy) {
  const BroadcastCase cases[] = {
      {Shape{7, 1, 65}, Shape{1, 63, 1}},        // both operands broadcast
      {Shape{257}, Shape{31, 257}},              // rank extension
      {Shape{31, 1}, Shape{31, 257}},            // column vector
      {Shape{}, Shape{5, 7}},                    // scalar tensor
      {Shape{3, 1, 5, 1, 7, 1}, Shape{1, 4, 1, 6, 1, 2}},  // six alternating axes
      {Shape{2, 3, 4, 5}, Shape{2, 1, 4, 1}},
      {Shape{0, 3}, Shape{1, 3}},                // empty
  };
  std::uint64_t seed = 100;
  for (const BroadcastCase& c : cases) check(GetParam(), c.a, c.b, seed++);
}

TEST_P(Binary, ScalarOperandOnEitherSide) {
  const vk::BinaryOp op = GetParam();
  const bool pow = op == vk::BinaryOp::pow;
  const std::vector<float> x = random_floats(1031, 9, pow ? 0.1f : 0.5f, 4.0f);
  const float scalar = pow ? 2.5f : 1.75f;
  const vk::BufferSlice dx = upload(x), right = scratch(x.size()), left = scratch(x.size());
  vk::Recording recording(device());
  vk::binary_scalar(recording, op, x.size(), dx, {scalar}, right);
  vk::binary_scalar(recording, op, x.size(), dx, {.value = scalar, .first = true}, left);
  recording.finish();
  recording.run();
  std::vector<double> want_right(x.size()), want_left(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    want_right[i] = binary_reference(op, x[i], scalar);
    want_left[i] = binary_reference(op, scalar, x[i]);
  }
  expect_close(download(right, x.size()), want_right, tolerance(op), "x op s");
  expect_close(download(left, x.size()), want_left, tolerance(op), "s op x");
}

INSTANTIATE_TEST_SUITE_P(Ops, Binary,
                         ::testing::Values(vk::BinaryOp::add, vk::BinaryOp::sub, vk::BinaryOp::mul, vk::BinaryOp::div,
                                           vk::BinaryOp::max, vk::BinaryOp::min, vk::BinaryOp::pow),
                         [](const auto& p) { return std::string(vk::to_string(p.param)); });

TEST_F(VkTest, PowOfNegativeBaseFollowsNumpy) {
  const std::vector<float> a = {-2.0f, -2.0f, -2.0f, 0.0f, 0.0f, 0.0f}, b = {3.0f, 2.0f, 0.5f, 2.0f, 0.0f, -1.0f};
  const vk::BufferSlice da = upload(a), db = upload(b), dc = scratch(6);
  vk::Recording recording(device());
  vk::binary(recording, vk::BinaryOp::pow, {Shape{6}, da}, {Shape{6}, db}, dc);
  recording.finish();
  recording.run();
  const std::vector<float> c = download(dc, 6);
  EXPECT_EQ(c[0], -8.0f);
  EXPECT_EQ(c[1], 4.0f);
  EXPECT_TRUE(std::isnan(c[2]));
  EXPECT_EQ(c[3], 0.0f);
  EXPECT_EQ(c[4], 1.0f);
  EXPECT_TRUE(std::isinf(c[5]));
}

TEST(BroadcastShapes, IncompatibleShapesNameBoth) {
  try {
    broadcast_shapes(Shape{3, 4}, Shape{5, 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("[3, 4] and [5, 4]"), std::string::npos) << e.what();
  }
}

TEST(BroadcastShapes, MergesAxesThatBroadcastAlike) {
  const vk::BinaryPush same = vk::binary_push(Shape{4, 5, 6}, Shape{4, 5, 6});
  EXPECT_EQ(same.rank, 1u);
  EXPECT_EQ(same.dims[0], 120u);
  const vk::BinaryPush row = vk::binary_push(Shape{4, 5, 6}, Shape{6});
  EXPECT_EQ(row.rank, 2u);
  EXPECT_EQ(row.stride_b[0], 0u);
  EXPECT_THROW(vk::binary_push(Shape{2, 1, 2, 1, 2, 1, 2}, Shape{1, 2, 1, 2, 1, 2, 1}), Error);
}

}  // namespace
}  // namespace vkp::test
