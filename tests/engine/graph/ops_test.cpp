// Every op: forward on the device against the reference, its gradient rule against
// finite differences, the device gradients against the reference gradients (op_check.h).
// Shapes are awkward on purpose (odd extents, not tile multiples).
#include "engine/graph/ops.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "checker.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/layers.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "op_check.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;
using graph::i32;

using Inputs = std::vector<Tensor>;

// check_op's rule rejects zeros, one element beyond its tolerance and a transposed result,
// at the default forward tolerance and at batch norm's, on a reference result (softmax
// of [9, 14] logits, evaluated in double).
TEST(OpChecker, RejectsZerosAnElementBeyondItsToleranceAndATransposedResult) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({9, 14}));
  const std::vector<float> logits = random_floats(9 * 14, 3, -4.0f, 4.0f);
  Array xv(DType::f32, Shape{9, 14});
  std::copy(logits.begin(), logits.end(), xv.data<float>().begin());
  RefState state = RefState::initial(g);
  const std::vector<double> want =
      evaluate_reference(g, {{x.id(), RefTensor::from(xv)}}, {softmax(x) * 30.0f}, {}, state)[0].values;
  for (double tolerance : {1e-5, 2e-5})
    expect_checker_rejects(want, relative_tolerances(want, tolerance), 9, 14, "check_op at " + std::to_string(tolerance));
}

TEST(Ops, UnaryFunctions) {
  const std::pair<std::string, std::function<Tensor(Tensor)>> fns[] = {
      {"relu", [](Tensor x) { return relu(x); }},
      {"leaky_relu", [](Tensor x) { return leaky_relu(x, 0.1f); }},
      {"elu", [](Tensor x) { return elu(x, 0.7f); }},
      {"gelu", [](Tensor x) { return gelu(x); }},
      {"sigmoid", [](Tensor x) { return sigmoid(x); }},
      {"tanh", [](Tensor x) { return graph::tanh(x); }},
      {"exp", [](Tensor x) { return graph::exp(x); }},
      {"neg", [](Tensor x) { return neg(x); }},
      {"abs", [](Tensor x) { return graph::abs(x); }},
      {"square", [](Tensor x) { return square(x); }},
  };
  for (const auto& [name, fn] : fns)
    check_op({.name = name, .inputs = {f32({7, 13})}, .build = [fn = fn](Inputs& in) { return fn(in[0]); }});
  // Positive inputs for log, sqrt, rsqrt.
  check_op({.name = "log", .inputs = {f32({65})}, .build = [](Inputs& in) { return graph::log(in[0]); }, .low = 0.5f});
  check_op({.name = "sqrt", .inputs = {f32({65})}, .build = [](Inputs& in) { return graph::sqrt(in[0]); }, .low = 0.5f});
  check_op({.name = "rsqrt", .inputs = {f32({65})}, .build = [](Inputs& in) { return rsqrt(in[0]); }, .low = 0.5f});
}

TEST(Ops, BinaryOperatorsBroadcast) {
  const std::pair<std::string, std::function<Tensor(Tensor, Tensor)>> fns[] = {
      {"add", [](Tensor a, Tensor b) { return a + b; }},
      {"sub", [](Tensor a, Tensor b) { return a - b; }},
      {"mul", [](Tensor a, Tensor b) { return a * b; }},
      {"maximum", [](Tensor a, Tensor b) { return maximum(a, b); }},
      {"minimum", [](Tensor a, Tensor b) { return minimum(a, b); }},
  };
  for (const auto& [name, fn] : fns)
    check_op({.name = name, .inputs = {f32({5, 1, 7}), f32({3, 1})}, .build = [fn = fn](Inputs& in) { return fn(in[0], in[1]); }});
  check_op({.name = "div",
            .inputs = {f32({4, 9}), f32({9})},
            .build = [](Inputs& in) { return in[0] / in[1]; },
            .low = 0.5f,
            .high = 2.0f});
  check_op({.name = "pow",
            .inputs = {f32({6, 5}), f32({6, 1})},
            .build = [](Inputs& in) { return graph::pow(in[0], in[1]); },
            .low = 0.5f,
            .high = 2.0f,
            .backward_tolerance = 1e-3});
  check_op({.name = "bias_add", .inputs = {f32({3, 5, 7}), f32({7})}, .build = [](Inputs& in) { return bias_add(in[0], in[1]); }});
  check_op({.name = "scalar constant",
            .inputs = {f32({33})},
            .build = [](Inputs& in) { return (in[0] * 3.0f) + 0.5f; }});
  check_op({.name = "sigmoid_cross_entropy",
            .inputs = {f32({4, 7}), f32({4, 7})},
            .build = [](Inputs& in) { return sigmoid_cross_entropy(in[0], sigmoid(in[1])); }});
}

TEST(Ops, Matmul) {
  check_op({.name = "plain", .inputs = {f32({7, 13}), f32({13, 5})}, .build = [](Inputs& in) { return matmul(in[0], in[1]); }});
  check_op({.name = "transposed a", .inputs = {f32({13, 7}), f32({13, 5})}, .build = [](Inputs& in) {
              return matmul(in[0], in[1], /*transpose_a=*/true, /*transpose_b=*/false);
            }});
  check_op({.name = "transposed b", .inputs = {f32({7, 13}), f32({5, 13})}, .build = [](Inputs& in) {
              return matmul(in[0], in[1], /*transpose_a=*/false, /*transpose_b=*/true);
            }});
  check_op({.name = "both transposed", .inputs = {f32({13, 7}), f32({5, 13})}, .build = [](Inputs& in) {
              return matmul(in[0], in[1], /*transpose_a=*/true, /*transpose_b=*/true);
            }});
  check_op({.name = "batched",
            .inputs = {f32({3, 4, 6}), f32({3, 6, 5})},
            .build = [](Inputs& in) { return matmul(in[0], in[1]); }});
  check_op({.name = "batched with a shared operand",
            .inputs = {f32({3, 4, 6}), f32({6, 5})},
            .build = [](Inputs& in) { return matmul(in[0], in[1]); }});
}

TEST(Ops, Reductions) {
  check_op({.name = "sum all", .inputs = {f32({5, 7, 3})}, .build = [](Inputs& in) { return reduce_sum(in[0]); }});
  check_op({.name = "sum axis", .inputs = {f32({5, 7, 3})}, .build = [](Inputs& in) { return reduce_sum(in[0], {1}); }});
  check_op({.name = "mean axes keep",
            .inputs = {f32({5, 7, 3})},
            .build = [](Inputs& in) { return reduce_mean(in[0], {0, 1}, true); }});
  check_op({.name = "mean separated axes",
            .inputs = {f32({5, 7, 3})},
            .build = [](Inputs& in) { return reduce_mean(in[0], {0, 2}); }});
  check_op({.name = "max axis", .inputs = {f32({5, 7, 3})}, .build = [](Inputs& in) { return reduce_max(in[0], {-1}); }});
  check_op({.name = "l2_loss", .inputs = {f32({9, 4})}, .build = [](Inputs& in) { return l2_loss(in[0]); }});
  check_op({.name = "rms", .inputs = {f32({9, 4})}, .build = [](Inputs& in) { return rms(in[0]); }});
  check_op({.name = "argmax",
            .inputs = {f32({6, 11})},
            .build = [](Inputs& in) { return cast(argmax(in[0], 1), DType::f32); },
            .check_gradients = false});
}

TEST(Ops, Shapes) {
  check_op({.name = "reshape", .inputs = {f32({6, 10})}, .build = [](Inputs& in) { return square(reshape(in[0], {3, -1, 5})); }});
  check_op({.name = "flatten", .inputs = {f32({2, 3, 5})}, .build = [](Inputs& in) { return flatten(in[0]) * 2.0f; }});
  check_op({.name = "slice", .inputs = {f32({7, 9})}, .build = [](Inputs& in) { return slice(in[0], {2, 1}, {4, -1}); }});
  check_op({.name = "concat middle axis",
            .inputs = {f32({2, 3, 4}), f32({2, 5, 4})},
            .build = [](Inputs& in) { return concat({in[0], in[1]}, 1); }});
  check_op({.name = "transpose", .inputs = {f32({3, 4, 5})}, .build = [](Inputs& in) { return transpose(in[0], {2, 0, 1}); }});
  check_op({.name = "broadcast_to", .inputs = {f32({3, 1})}, .build = [](Inputs& in) { return broadcast_to(in[0], {2, 3, 5}); }});
  check_op({.name = "pad", .inputs = {f32({3, 4})}, .build = [](Inputs& in) { return pad(in[0], {1, 0}, {2, 3}); }});
  check_op({.name = "identity", .inputs = {f32({9})}, .build = [](Inputs& in) { return identity(in[0]) * in[0]; }});
  check_op({.name = "cast to i32 and back",
            .inputs = {f32({17})},
            .build = [](Inputs& in) { return cast(cast(in[0] * 10.0f, DType::i32), DType::f32); },
            .check_gradients = false});
}

TEST(Ops, Convolutions) {
  check_op({.name = "conv2d same stride 1",
            .inputs = {f32({2, 7, 6, 3}), f32({3, 3, 3, 5})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1]); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d valid stride 2",
            .inputs = {f32({2, 9, 8, 2}), f32({3, 2, 2, 4})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1], {.strides = {2, 2}, .padding = Padding::valid}); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d dilated",
            .inputs = {f32({1, 9, 9, 2}), f32({3, 3, 2, 3})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1], {.dilations = {2, 2}}); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d grouped",
            .inputs = {f32({2, 5, 5, 4}), f32({3, 3, 2, 6})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1], {.groups = 2}); },
            .backward_tolerance = 2e-4});
  // Channel runs of 4: the vec4 paths of im2col and col2im.
  check_op({.name = "conv2d 8 channels",
            .inputs = {f32({2, 5, 6, 8}), f32({3, 3, 8, 3})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1], {.strides = {2, 1}}); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d grouped 4 channels per group",
            .inputs = {f32({1, 6, 5, 8}), f32({3, 3, 4, 6})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1], {.groups = 2}); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d_transpose to 8 channels",
            .inputs = {f32({2, 3, 3, 4}), f32({3, 3, 8, 4})},
            .build = [](Inputs& in) { return conv2d_transpose(in[0], in[1], {.strides = {2, 2}}); },
            .backward_tolerance = 2e-4});
  // Stride 1 with channel runs of 4 (the vec4 paths of implicit GEMM's packing in all
  // three products), several panels of pixels, a window of 2x3 dilated and VALID, and a
  // stride-1 transposed convolution (the input gradient's map as a forward op).
  check_op({.name = "conv2d 8 to 12 channels",
            .inputs = {f32({2, 6, 7, 8}), f32({3, 3, 8, 12})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1]); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d 429 pixels",
            .inputs = {f32({3, 13, 11, 4}), f32({3, 3, 4, 8})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1]); },
            .backward_tolerance = 2e-4});
  // 2112 pixels: the filter gradient is split in two partial sums.
  check_op({.name = "conv2d filter gradient split",
            .inputs = {f32({2, 33, 32, 3}), f32({3, 3, 3, 4})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1]); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d valid dilated 2x3",
            .inputs = {f32({1, 9, 8, 4}), f32({2, 3, 4, 5})},
            .build = [](Inputs& in) {
              return conv2d(in[0], in[1], {.dilations = {2, 1}, .padding = Padding::valid});
            },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d_transpose stride 1",
            .inputs = {f32({2, 4, 5, 8}), f32({3, 2, 4, 8})},
            .build = [](Inputs& in) { return conv2d_transpose(in[0], in[1]); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d pointwise",
            .inputs = {f32({2, 5, 3, 7}), f32({1, 1, 7, 4})},
            .build = [](Inputs& in) { return conv2d(in[0], in[1]); }});
  check_op({.name = "conv2d_transpose same stride 2",
            .inputs = {f32({2, 4, 3, 3}), f32({3, 3, 5, 3})},
            .build = [](Inputs& in) { return conv2d_transpose(in[0], in[1], {.strides = {2, 2}}); },
            .backward_tolerance = 2e-4});
  check_op({.name = "conv2d_transpose valid",
            .inputs = {f32({1, 3, 4, 2}), f32({2, 3, 3, 2})},
            .build = [](Inputs& in) {
              return conv2d_transpose(in[0], in[1], {.strides = {2, 1}, .padding = Padding::valid});
            },
            .backward_tolerance = 2e-4});
}

TEST(Ops, Resize) {
  for (const ResizeMethod method : {ResizeMethod::bilinear, ResizeMethod::nearest}) {
    const std::string how = method == ResizeMethod::bilinear ? "bilinear " : "nearest ";
    // Up by 2, up by an awkward factor, down, and to the same size.
    check_op({.name = how + "up 2x",
              .inputs = {f32({2, 3, 4, 3})},
              .build = [method](Inputs& in) { return resize(in[0], {6, 8}, method); }});
    check_op({.name = how + "up 5x7 to 7x11",
              .inputs = {f32({1, 5, 7, 2})},
              .build = [method](Inputs& in) { return resize(in[0], {7, 11}, method); }});
    check_op({.name = how + "down 9x8 to 4x3",
              .inputs = {f32({2, 9, 8, 1})},
              .build = [method](Inputs& in) { return resize(in[0], {4, 3}, method); }});
    check_op({.name = how + "same size",
              .inputs = {f32({1, 4, 5, 2})},
              .build = [method](Inputs& in) { return resize(in[0], {4, 5}, method); }});
  }
}

TEST(Ops, InstanceNormWithoutAffine) {
  // Composed of reductions and elementwise ops: forward and gradients through them.
  check_op({.name = "instance_norm",
            .inputs = {f32({2, 3, 5, 4})},
            .build = [](Inputs& in) { return InstanceNorm("in", in[0], 1e-3f, false); },
            .gradient_tolerance = 1e-4,
            .backward_tolerance = 2e-4});
  // Against its definition: each image's each channel has mean 0 and, with epsilon 0,
  // mean square 1 over H x W.
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({2, 3, 5, 4}));
  const Tensor y = InstanceNorm("in", x, 0.0f, false);
  Session s(g, device());
  Array in(DType::f32, Shape{2, 3, 5, 4});
  Rng rng(2);
  for (float& v : in.data<float>()) v = 3.0f + 2.0f * rng.normal();
  const Array out = s.run({{x, in}}, {y})[0];
  for (int b = 0; b < 2; ++b)
    for (int c = 0; c < 4; ++c) {
      double mean = 0, squares = 0;
      for (int i = 0; i < 15; ++i) {
        const double v = out.data<float>()[static_cast<std::size_t>((b * 15 + i) * 4 + c)];
        mean += v / 15, squares += v * v / 15;
      }
      EXPECT_NEAR(mean, 0.0, 1e-5) << b << "," << c;
      EXPECT_NEAR(squares, 1.0, 1e-4) << b << "," << c;
    }
}

TEST(Ops, ResizeBilinearGivesTensorFlowOnesKnownValues) {
  // tf.compat.v1.image.resize_bilinear([[0, 1], [2, 3]], [4, 4]) (align_corners=False):
  // rows sample 0, 0.5, 1, 1.5 (the last clamps), columns likewise.
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({1, 2, 2, 1}));
  const Tensor up = resize(x, {4, 4});
  const Tensor near = resize(x, {4, 4}, ResizeMethod::nearest);
  Session s(g, device());
  const std::vector<Array> got = s.run({{x, Array::from(Shape{1, 2, 2, 1}, std::vector<float>{0, 1, 2, 3})}}, {up, near});
  EXPECT_EQ(std::vector<float>(got[0].data<float>().begin(), got[0].data<float>().end()),
            (std::vector<float>{0, 0.5f, 1, 1, 1, 1.5f, 2, 2, 2, 2.5f, 3, 3, 2, 2.5f, 3, 3}));
  EXPECT_EQ(std::vector<float>(got[1].data<float>().begin(), got[1].data<float>().end()),
            (std::vector<float>{0, 0, 1, 1, 0, 0, 1, 1, 2, 2, 3, 3, 2, 2, 3, 3}));
}

TEST(Ops, Conv2DTransposeShapesFollowTensorFlowsRule) {
  // TensorFlow's conv2d_transpose output for stride s: SAME in * s; VALID
  // (in - 1) * s + (k - 1) * dilation + 1; odd and even inputs, square and not.
  Graph g(1);
  const auto out = [&](std::int64_t h, std::int64_t w, std::int64_t k, std::array<std::int64_t, 2> s, Padding p) {
    const Tensor x = placeholder(g, "x" + std::to_string(g.size()), f32({2, h, w, 3}));
    const Tensor f = placeholder(g, "f" + std::to_string(g.size()), f32({k, k, 5, 3}));
    return conv2d_transpose(x, f, {.strides = s, .padding = p}).dims();
  };
  EXPECT_EQ(out(7, 7, 5, {2, 2}, Padding::same), (std::vector<std::int64_t>{2, 14, 14, 5}));
  EXPECT_EQ(out(4, 5, 3, {2, 2}, Padding::same), (std::vector<std::int64_t>{2, 8, 10, 5}));
  EXPECT_EQ(out(4, 5, 3, {2, 3}, Padding::valid), (std::vector<std::int64_t>{2, 9, 15, 5}));
  EXPECT_EQ(out(7, 7, 5, {2, 2}, Padding::valid), (std::vector<std::int64_t>{2, 17, 17, 5}));
}

TEST(Ops, Pooling) {
  check_op({.name = "max_pool valid",
            .inputs = {f32({2, 7, 6, 3})},
            .build = [](Inputs& in) { return max_pool(in[0], {2, 2}, {2, 2}); }});
  check_op({.name = "max_pool same overlapping",
            .inputs = {f32({1, 7, 7, 2})},
            .build = [](Inputs& in) { return max_pool(in[0], {3, 3}, {2, 2}, Padding::same); }});
  check_op({.name = "avg_pool same",
            .inputs = {f32({2, 5, 7, 3})},
            .build = [](Inputs& in) { return avg_pool(in[0], {3, 2}, {2, 2}, Padding::same); }});
  // Channels in fours: the vec4 path.
  check_op({.name = "max_pool 8 channels",
            .inputs = {f32({2, 5, 6, 8})},
            .build = [](Inputs& in) { return max_pool(in[0], {3, 2}, {2, 2}, Padding::same); }});
  check_op({.name = "avg_pool 4 channels",
            .inputs = {f32({1, 7, 5, 4})},
            .build = [](Inputs& in) { return avg_pool(in[0], {2, 3}, {1, 2}); }});
  // Windows that tile the input exactly: the gradient goes per window (kGrad 2).
  check_op({.name = "max_pool tiling",
            .inputs = {f32({2, 8, 6, 3})},
            .build = [](Inputs& in) { return max_pool(in[0], {2, 2}, {2, 2}); }});
  check_op({.name = "max_pool tiling 8 channels",
            .inputs = {f32({2, 6, 4, 8})},
            .build = [](Inputs& in) { return max_pool(in[0], {2, 2}, {2, 2}); }});
  check_op({.name = "avg_pool tiling 3x2",
            .inputs = {f32({1, 6, 6, 4})},
            .build = [](Inputs& in) { return avg_pool(in[0], {3, 2}, {3, 2}); }});
  check_op({.name = "global_avg_pool", .inputs = {f32({3, 5, 4, 6})}, .build = [](Inputs& in) { return global_avg_pool(in[0]); }});
}

TEST(Ops, Classification) {
  // Rows longer than a workgroup (64 invocations) and more rows than one workgroup takes.
  check_op({.name = "softmax",
            .inputs = {f32({5, 11})},
            .more_inputs = {{f32({70, 1000})}},
            .build = [](Inputs& in) { return softmax(in[0]); }});
  check_op({.name = "log_softmax",
            .inputs = {f32({3, 4, 7})},
            .more_inputs = {{f32({2, 40, 517})}},
            .build = [](Inputs& in) { return log_softmax(in[0]); }});
  check_op({.name = "sparse_softmax_cross_entropy",
            .inputs = {f32({9, 10}), i32({9})},
            .more_inputs = {{f32({130, 300}), i32({130})}},
            .build = [](Inputs& in) { return sparse_softmax_cross_entropy(in[0], in[1]); },
            .label_range = 10});
  check_op({.name = "in_top_k 3",
            .inputs = {f32({33, 10}), i32({33})},
            .build = [](Inputs& in) { return in_top_k(in[0], in[1], 3); },
            .label_range = 10,
            .check_gradients = false});
  check_op({.name = "accuracy",
            .inputs = {f32({33, 10}), i32({33})},
            .build = [](Inputs& in) { return accuracy(in[0], in[1]); },
            .label_range = 10,
            .check_gradients = false});
}

// A row with a NaN or infinite prediction is never in the top k, on the device and in
// the reference (TensorFlow's rule): a diverged model must not score as accurate.
TEST(Ops, InTopKCountsNonFiniteRowsAsWrong) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  // Row: predictions over 4 classes, the label, whether it is in the top 1.
  struct Row {
    std::array<float, 4> x;
    std::int32_t label;
    float want;
  };
  const std::vector<Row> rows = {
      {{0.1f, 0.9f, 0.3f, 0.2f}, 1, 1},  // right
      {{0.1f, 0.9f, 0.3f, 0.2f}, 2, 0},  // wrong
      {{nan, nan, nan, nan}, 0, 0},      // everything NaN: no entry "exceeds" the label's
      {{0.1f, nan, 0.3f, 0.2f}, 2, 0},   // one NaN elsewhere in the row
      {{0.1f, 0.2f, inf, 0.3f}, 2, 0},   // the label's own entry infinite
      {{-inf, 0.2f, 0.1f, 0.0f}, 1, 0},  // an infinite entry elsewhere
  };
  Graph g(1);
  const auto n = static_cast<std::int64_t>(rows.size());
  const Tensor x = placeholder(g, "x", f32({n, 4}));
  const Tensor labels = placeholder(g, "labels", i32({n}));
  const Tensor hit = in_top_k(x, labels, 1);
  Array xv(DType::f32, Shape{n, 4}), lv(DType::i32, Shape{n});
  for (std::size_t r = 0; r < rows.size(); ++r) {
    for (std::size_t c = 0; c < 4; ++c) xv.data<float>()[r * 4 + c] = rows[r].x[c];
    lv.data<std::int32_t>()[r] = rows[r].label;
  }
  Session session(g, test::device());
  const Array got = session.run({{x, xv}, {labels, lv}}, {hit})[0];
  RefState state = RefState::initial(g);
  const Array ref = evaluate_reference(g, {{x.id(), RefTensor::from(xv)}, {labels.id(), RefTensor::from(lv)}}, {hit}, {},
                                       state)[0]
                        .to_array();
  for (std::size_t r = 0; r < rows.size(); ++r) {
    EXPECT_EQ(got.data<float>()[r], rows[r].want) << "device, row " << r;
    EXPECT_EQ(ref.data<float>()[r], rows[r].want) << "reference, row " << r;
  }
}

TEST(Ops, DropoutReappliesItsMaskInTheGradient) {
  check_op({.name = "dropout", .inputs = {f32({31, 17})}, .build = [](Inputs& in) { return dropout(in[0], 0.3f); }});
}


TEST(Ops, GradientProcessorsClipAndScale) {
  check_op({.name = "clip_by_global_norm",
            .inputs = {f32({6}), f32({4})},
            .build = [](Inputs& in) {
              Graph& g = in[0].graph();
              const Tensor a = get_variable(g, "a", {6}, constant(2.0f)), b = get_variable(g, "b", {4}, constant(-1.0f));
              const Tensor cost = reduce_sum(mul(a, in[0])) + reduce_sum(mul(b, in[1]));
              std::vector<GradAndVar> pairs = {{gradients(cost, {a})[0], a}, {gradients(cost, {b})[0], b}};
              pairs = scale_gradients(clip_by_global_norm(pairs, 0.5f), "b", 3.0f);
              return concat({pairs[0].first, pairs[1].first}, 0);
            },
            .check_gradients = false});
}

}  // namespace
}  // namespace vkp::test
