// Reductions against the double-precision reference; both variants where they differ.
//
// Tolerances (u = 2^-24, the f32 rounding unit; n = the reduced axis's length):
// - Integer-valued data in [-8, 8] with n <= 2^20: every partial sum, in any order, is an
//   integer of magnitude <= 2^23, so exactly representable: sum must be exact (tolerance 0;
//   a dropped, doubled or misplaced element is seen). mean = fl(S * fl(1/n)): two
//   roundings, |err| <= (2u + u^2) |S/n|, tolerance 2^-23 |mean| (1 + 2^-20).
// - Real data in [-1, 1): the probabilistic bound of Higham and Mary (SIAM J. Sci. Comput.
//   41(5), 2019, Theorem 3.1): summing n terms in any order, |err| <= lambda sqrt(n) u
//   sum|x| except with probability at most 2 n exp(-lambda^2 (1-u)^2 / 2) over the
//   rounding errors; lambda = 8 makes that 3e-8 at n = 2^20. (The worst-case bound,
//   n u sum|x|, is about 2^20 / 2^24 * 2^19 = 32768 at n = 2^20, where the sum itself is
//   about 600: it could not see a kernel that wrote zeros.) mean adds its scaling's 2u.
// - max is exact.
// The checker's power is itself tested (ReduceChecker): zeros, one element 4 ulps beyond
// its tolerance and a transposed result are rejected.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "checker.h"
#include "reference.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "core/rng.h"
#include "engine/vk/kernels/reduce.h"

namespace vkp::test {
namespace {

enum class Data { integers, reals };

// Inputs of `n` elements: integers in [-8, 8], or reals in [-1, 1).
std::vector<float> inputs(Data data, std::size_t n, std::uint64_t seed) {
  if (data == Data::reals) return random_floats(n, seed);
  std::vector<float> x(n);
  Rng rng(seed);
  for (float& v : x) v = static_cast<float>(static_cast<int>(rng.below(17)) - 8);
  return x;
}

// Per output, the tolerance derived above.
std::vector<double> reduce_tolerance(const vk::ReduceArgs& args, Data data, const std::vector<float>& x,
                                     const std::vector<double>& want) {
  const double u = std::ldexp(1.0, -24), lambda = 8.0;
  std::vector<double> tolerance(want.size(), 0.0);
  if (args.op == vk::ReduceOp::max) return tolerance;
  for (std::size_t o = 0; o < want.size(); ++o) {
    const std::size_t outer = o / args.inner, inner = o % args.inner;
    double magnitude = 0;
    for (std::uint32_t a = 0; a < args.axis; ++a) magnitude += std::abs(x[(outer * args.axis + a) * args.inner + inner]);
    double t = data == Data::integers ? 0.0 : lambda * std::sqrt(double(args.axis)) * u * magnitude;
    if (args.op == vk::ReduceOp::mean) t = t / args.axis + 2 * u * std::abs(want[o]) * (1 + std::ldexp(1.0, -20));
    tolerance[o] = t;
  }
  return tolerance;
}

class ReduceTest : public VkTest {
 protected:
  std::vector<float> run(const vk::ReduceArgs& args, const std::vector<float>& x) {
    const std::size_t outputs = std::size_t{args.outer} * args.inner;
    const vk::BufferSlice dx = upload(x), dy = scratch(outputs);
    const vk::BufferSlice work =
        arena().allocate(std::max<std::size_t>(vk::reduce_workspace_bytes(args, device()), 4), "work");
    vk::Recording recording(device());
    vk::reduce(recording, args, dx, dy, work);
    recording.finish();
    recording.run();
    return download(dy, outputs);
  }

  // Both kinds of data.
  void check(const vk::ReduceArgs& args, std::uint64_t seed) {
    for (Data data : {Data::integers, Data::reals}) {
      const std::vector<float> x = inputs(data, std::size_t{args.outer} * args.axis * args.inner, seed);
      const std::vector<double> want = reduce_reference(args.op, args.outer, args.axis, args.inner, x);
      EXPECT_EQ(compare(run(args, x), want, reduce_tolerance(args, data, x, want)), "")
          << (data == Data::integers ? "integers" : "reals") << " [" << args.outer << ", " << args.axis << ", "
          << args.inner << "]";
    }
  }
};

TEST(ReduceChecker, RejectsZerosAnElementBeyondItsToleranceAndATransposedResult) {
  // [3, 40, 7] over the middle axis: a [3, 7] result.
  const vk::ReduceArgs base = vk::reduce_axis_args(vk::ReduceOp::sum, Shape{3, 40, 7}, 1);
  for (vk::ReduceOp op : {vk::ReduceOp::sum, vk::ReduceOp::mean, vk::ReduceOp::max})
    for (Data data : {Data::integers, Data::reals}) {
      vk::ReduceArgs args = base;
      args.op = op;
      const std::vector<float> x = inputs(data, 3 * 40 * 7, 3);
      const std::vector<double> want = reduce_reference(op, 3, 40, 7, x);
      expect_checker_rejects(want, reduce_tolerance(args, data, x, want), 3, 7,
                             "reduce op " + std::to_string(static_cast<int>(op)) +
                                 (data == Data::integers ? ", integers" : ", reals"));
    }
}

struct ReduceCase {
  vk::ReduceOp op;
  vk::KernelChoice choice;
};

class ReduceOps : public ReduceTest, public ::testing::WithParamInterface<ReduceCase> {};

TEST_P(ReduceOps, EachAxisOfAwkwardShapes) {
  const Shape shapes[] = {Shape{7, 63, 65}, Shape{1031, 257}, Shape{1, 1}, Shape{65, 1, 7}};
  std::uint64_t seed = 1;
  for (const Shape& shape : shapes)
    for (int axis = 0; axis < shape.rank(); ++axis) {
      vk::ReduceArgs args = vk::reduce_axis_args(GetParam().op, shape, axis);
      args.choice = GetParam().choice;
      check(args, seed++);
    }
}

TEST_P(ReduceOps, AllAxesIncludingTwoPassSizes) {
  std::uint64_t seed = 50;
  for (std::int64_t n : {1, 7, 63, 65, 257, 1031, 100003, 1 << 20}) {
    vk::ReduceArgs args = vk::reduce_all_args(GetParam().op, Shape{n});
    args.choice = GetParam().choice;
    check(args, seed++);
  }
}

TEST_P(ReduceOps, LongRowsWithFewOutputsTakeTwoPasses) {
  vk::ReduceArgs args = vk::reduce_axis_args(GetParam().op, Shape{3, 70001}, 1);
  args.choice = GetParam().choice;
  EXPECT_GT(vk::reduce_workspace_bytes(args, device()), 0u);
  check(args, 77);
}

TEST_P(ReduceOps, IsBitwiseDeterministic) {
  vk::ReduceArgs args = vk::reduce_all_args(GetParam().op, Shape{300007});
  args.choice = GetParam().choice;
  const std::vector<float> x = random_floats(300007, 5);
  const std::vector<float> first = run(args, x), second = run(args, x);
  EXPECT_EQ(std::memcmp(first.data(), second.data(), first.size() * 4), 0);
}

std::vector<ReduceCase> reduce_cases() {
  std::vector<ReduceCase> cases;
  for (vk::KernelChoice choice : {vk::KernelChoice::cpu, vk::KernelChoice::gpu})
    for (vk::ReduceOp op : {vk::ReduceOp::sum, vk::ReduceOp::mean, vk::ReduceOp::max}) cases.push_back({op, choice});
  return cases;
}

std::string reduce_case_name(const ::testing::TestParamInfo<ReduceCase>& c) {
  const char* names[] = {"sum", "mean", "max"};
  return std::string(names[static_cast<int>(c.param.op)]) + (c.param.choice == vk::KernelChoice::cpu ? "_cpu" : "_gpu");
}

INSTANTIATE_TEST_SUITE_P(Ops, ReduceOps, ::testing::ValuesIn(reduce_cases()), reduce_case_name);

TEST_F(ReduceTest, SumOverAnEmptyAxisIsZero) {
  const vk::ReduceArgs args = vk::reduce_axis_args(vk::ReduceOp::sum, Shape{3, 0, 2}, 1);
  EXPECT_EQ(run(args, {}), std::vector<float>(6, 0.0f));
}

TEST(ReduceArgs, BadAxisAndEmptyMaxAreErrors) {
  EXPECT_THROW(vk::reduce_axis_args(vk::ReduceOp::sum, Shape{3, 4}, 2), Error);
  EXPECT_THROW(vk::reduce_axis_args(vk::ReduceOp::max, Shape{3, 0}, 1), Error);
  EXPECT_THROW(vk::reduce_all_args(vk::ReduceOp::mean, Shape{0}), Error);
  const vk::ReduceArgs args = vk::reduce_axis_args(vk::ReduceOp::sum, Shape{2, 3, 4, 5}, -2);
  EXPECT_EQ(args.outer, 6u);
  EXPECT_EQ(args.axis, 4u);
  EXPECT_EQ(args.inner, 5u);
}

}  // namespace
}  // namespace vkp::test
