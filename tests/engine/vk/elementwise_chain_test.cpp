// elementwise_chain against the same ops evaluated one by one in double: a chain over
// all three input modes, random chains of 1 to 8 steps, and the errors.
//
// Tolerance: each op of the elementwise tests is held to 2^-20 relative to max(1,
// |result|) (elementwise_test.cpp); along a chain those errors add up, carried by ops
// whose slope is at most 2 on these inputs (values stay within [-4, 4]), so a chain of
// s steps gets s 2^-18 max(1, |result|).
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "reference.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "core/rng.h"
#include "engine/vk/kernels/elementwise_chain.h"

namespace vkp::test {
namespace {

using vk::BinaryOp;
using vk::ChainInput;
using vk::ChainStep;
using vk::UnaryOp;

// The reference's leaky relu slope and elu alpha (reference.cpp).
constexpr float kLeaky = 0.2f, kElu = 1.0f;

double step_value(const ChainStep& s, double a, double b) {
  if (s.op < 32) return unary_reference(static_cast<UnaryOp>(s.op), a);
  switch (static_cast<BinaryOp>(s.op - 32)) {
    case BinaryOp::relu_grad: return a > 0 ? b : 0.0;
    case BinaryOp::sigmoid_grad: return b * a * (1 - a);
    case BinaryOp::tanh_grad: return b * (1 - a * a);
    case BinaryOp::leaky_relu_grad: return a > 0 ? b : s.alpha * b;
    default: return binary_reference(static_cast<BinaryOp>(s.op - 32), a, b);
  }
}

class ElementwiseChain : public VkTest {
 protected:
  void check(const std::vector<ChainStep>& steps, const std::vector<ChainInput>& modes, std::uint32_t n,
             std::uint32_t channels, std::uint64_t seed) {
    std::vector<std::vector<float>> values;
    std::vector<vk::BufferSlice> inputs;
    for (std::size_t k = 0; k < modes.size(); ++k) {
      const std::uint32_t size = modes[k] == ChainInput::full ? n : modes[k] == ChainInput::channel ? channels : 1;
      values.push_back(random_floats(size, seed + k));
      inputs.push_back(upload(values.back()));
    }
    std::vector<double> want(n), tolerance(n);
    for (std::uint32_t i = 0; i < n; ++i) {
      std::vector<double> v(4 + steps.size(), 0.0);
      for (std::size_t k = 0; k < modes.size(); ++k)
        v[k] = values[k][modes[k] == ChainInput::full ? i : modes[k] == ChainInput::channel ? i % channels : 0];
      for (std::size_t s = 0; s < steps.size(); ++s) v[4 + s] = step_value(steps[s], v[steps[s].a], v[steps[s].b]);
      want[i] = v.back();
      tolerance[i] = static_cast<double>(steps.size()) * std::ldexp(std::max(1.0, std::abs(want[i])), -18);
    }
    const vk::BufferSlice out = upload(std::vector<float>(n, std::nanf("")));
    vk::Recording recording(device(), {.name = "chain test"});
    vk::elementwise_chain(recording, steps, inputs, modes, {n, channels}, out);
    recording.finish();
    recording.run();
    EXPECT_EQ(compare(download(out, n), want, tolerance), "");
  }
};

// ((x + bias) * s), tanh, minus y, gated by relu'(x), sigmoid: four inputs in all three
// modes, six steps.
TEST_F(ElementwiseChain, SixStepsOverEveryInputMode) {
  const std::vector<ChainStep> steps = {
      vk::binary_step(BinaryOp::add, vk::chain_input(0), vk::chain_input(1)),
      vk::binary_step(BinaryOp::mul, vk::chain_result(0), vk::chain_input(2)),
      vk::unary_step(UnaryOp::tanh, vk::chain_result(1)),
      vk::binary_step(BinaryOp::sub, vk::chain_result(2), vk::chain_input(3)),
      vk::binary_step(BinaryOp::relu_grad, vk::chain_input(0), vk::chain_result(3)),
      vk::unary_step(UnaryOp::sigmoid, vk::chain_result(4)),
  };
  for (std::uint32_t n : {7u * 5u, 1031u * 3u, 65537u})
    check(steps, {ChainInput::full, ChainInput::channel, ChainInput::one, ChainInput::full}, n, n % 5 == 0 ? 5 : n % 3 == 0 ? 3 : 1, n);
}

// Random chains of 1 to 8 steps over 1 to 4 inputs, from ops that keep values bounded.
TEST_F(ElementwiseChain, RandomChains) {
  const std::vector<std::uint32_t> ops = {
      static_cast<std::uint32_t>(UnaryOp::relu),        static_cast<std::uint32_t>(UnaryOp::sigmoid),
      static_cast<std::uint32_t>(UnaryOp::tanh),        static_cast<std::uint32_t>(UnaryOp::neg),
      static_cast<std::uint32_t>(UnaryOp::abs),         static_cast<std::uint32_t>(UnaryOp::leaky_relu),
      static_cast<std::uint32_t>(UnaryOp::elu),         32 + static_cast<std::uint32_t>(BinaryOp::add),
      32 + static_cast<std::uint32_t>(BinaryOp::sub),   32 + static_cast<std::uint32_t>(BinaryOp::mul),
      32 + static_cast<std::uint32_t>(BinaryOp::max),   32 + static_cast<std::uint32_t>(BinaryOp::min),
      32 + static_cast<std::uint32_t>(BinaryOp::relu_grad), 32 + static_cast<std::uint32_t>(BinaryOp::tanh_grad),
      32 + static_cast<std::uint32_t>(BinaryOp::leaky_relu_grad)};
  Rng rng(17);
  for (int trial = 0; trial < 24; ++trial) {
    const auto inputs = static_cast<std::uint32_t>(1 + rng.below(4));
    const auto length = static_cast<std::uint32_t>(1 + rng.below(8));
    std::vector<ChainStep> steps;
    for (std::uint32_t s = 0; s < length; ++s) {
      // Mostly the previous result, so that the chain is one computation.
      auto operand = [&] {
        if (s > 0 && rng.below(3) != 0) return vk::chain_result(s - 1);
        const auto pick = static_cast<std::uint32_t>(rng.below(inputs + s));
        return pick < inputs ? vk::chain_input(pick) : vk::chain_result(pick - inputs);
      };
      ChainStep step;
      step.op = ops[rng.below(ops.size())];
      step.a = operand();
      step.b = operand();
      step.alpha = step.op == static_cast<std::uint32_t>(UnaryOp::elu) ? kElu : kLeaky;
      steps.push_back(step);
    }
    std::vector<ChainInput> modes;
    for (std::uint32_t k = 0; k < inputs; ++k) modes.push_back(static_cast<ChainInput>(rng.below(3)));
    modes[0] = ChainInput::full;
    SCOPED_TRACE("trial " + std::to_string(trial));
    check(steps, modes, 4 * 257, 4, 100 + static_cast<std::uint64_t>(trial));
  }
}

TEST_F(ElementwiseChain, TooManyStepsAndAnOperandFromTheFutureAreErrors) {
  const vk::BufferSlice x = scratch(64);
  vk::Recording recording(device());
  const std::vector<ChainInput> full = {ChainInput::full};
  const std::vector<vk::BufferSlice> in = {x};
  const std::vector<ChainStep> nine(9, vk::unary_step(UnaryOp::relu, vk::chain_input(0)));
  EXPECT_THROW(vk::elementwise_chain(recording, nine, in, full, {64, 1}, x), Error);
  const std::vector<ChainStep> future = {vk::unary_step(UnaryOp::relu, vk::chain_result(0))};
  EXPECT_THROW(vk::elementwise_chain(recording, future, in, full, {64, 1}, x), Error);
  const std::vector<ChainInput> channel = {ChainInput::channel};
  const std::vector<ChainStep> one = {vk::unary_step(UnaryOp::relu, vk::chain_input(0))};
  EXPECT_THROW(vk::elementwise_chain(recording, one, in, channel, {64, 5}, x), Error);  // 5 does not divide 64
}

}  // namespace
}  // namespace vkp::test
