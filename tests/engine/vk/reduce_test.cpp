// Reductions against the double-precision reference; both variants where they differ.
// Tolerance: sum and mean |err| <= n * 2^-23 * sum|x| (n-term f32 accumulation, with
// a factor 2); max is exact.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "reference.h"
#include "vk_test_env.h"
#include "vkpack/core/error.h"
#include "vkpack/engine/vk/kernels/reduce.h"

namespace vkp::test {
namespace {

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

  void check(const vk::ReduceArgs& args, std::uint64_t seed) {
    const std::vector<float> x = random_floats(std::size_t{args.outer} * args.axis * args.inner, seed);
    const std::vector<float> got = run(args, x);
    const std::vector<double> want = reduce_reference(args.op, args.outer, args.axis, args.inner, x);
    for (std::size_t o = 0; o < got.size(); ++o) {
      double magnitude = 0;
      const std::size_t outer = o / args.inner, inner = o % args.inner;
      for (std::uint32_t a = 0; a < args.axis; ++a)
        magnitude += std::abs(x[(outer * args.axis + a) * args.inner + inner]);
      if (args.op == vk::ReduceOp::mean) magnitude /= args.axis;
      const double tol = args.op == vk::ReduceOp::max ? 0.0 : args.axis * std::ldexp(1.0, -23) * magnitude;
      ASSERT_LE(std::abs(got[o] - want[o]), tol) << "output " << o << " of [" << args.outer << ", " << args.axis
                                                 << ", " << args.inner << "]: " << got[o] << " vs " << want[o];
    }
  }
};

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
