// The numbers the shaders compare: which elementwise function (unary.comp, binary.comp,
// elementwise_ops.glsl) and which optimizer update rule (optimizer.comp) a kernel runs.
// These enums are the one list. The shader build reads them (cmake/VkpackShaders.cmake)
// and defines VKP_UNARY_<NAME>, VKP_BINARY_<NAME> and VKP_RULE_<NAME>, numbered in
// order, in the generated op_codes.glsl; the kernels pass the enumerators' values as
// specialization constants. Append, reorder or rename freely: the shaders follow.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace vkp::shaders {

// leaky_relu and elu take alpha. gelu is the exact one, x Phi(x) (PyTorch's default,
// TensorFlow's approximate=False). round is to the nearest integer, halves to even
// (TensorFlow's round, numpy's rint).
// clang-format off
enum class UnaryOp : std::uint32_t {
  relu, sigmoid, tanh, exp, log, sqrt, rsqrt, neg, abs, square, leaky_relu, elu, gelu, floor, round
};
// clang-format on

// Besides arithmetic, the gradients of the unary functions (first operand x or y = f(x)
// as named, second dy), 0/1 comparisons, and the sigmoid cross entropy of logits x and
// labels z with its gradient.
// clang-format off
enum class BinaryOp : std::uint32_t {
  add, sub, mul, div, max, min, pow,
  relu_grad,          // (x, dy)
  sigmoid_grad,       // (y, dy)
  tanh_grad,          // (y, dy)
  sqrt_grad,          // (y, dy)
  rsqrt_grad,         // (y, dy)
  leaky_relu_grad,    // (x, dy), alpha
  elu_grad,           // (x, dy), alpha
  abs_grad,           // (x, dy)
  greater_equal,      // 1 where a >= b, else 0
  equal,              // 1 where a == b, else 0
  sigmoid_xent,       // (x, z): max(x, 0) - x z + log(1 + exp(-|x|))
  sigmoid_xent_grad,  // (x, z): sigmoid(x) - z
  gelu_grad,          // (x, dy): dy (Phi(x) + x phi(x))
  keep,               // (a, mask): a where mask != 0, else 0 (exact: a select, not a product)
};
// clang-format on

// The optimizer's update rules; graph::OptimizerKind is this enum.
enum class UpdateRule : std::uint8_t { sgd, momentum, nesterov, adam, adamw, rmsprop, adagrad };

// The enumerator's name ("relu", "sigmoid_xent"): kernel labels, node names, messages.
std::string_view to_string(UnaryOp op);
std::string_view to_string(BinaryOp op);

}  // namespace vkp::shaders
