// Every op: forward on the device against the reference, its gradient rule against
// finite differences, the device gradients against the reference gradients (op_check.h).
// Shapes are awkward on purpose (odd extents, not tile multiples).
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "checker.h"
#include "op_check.h"
#include "vk_test_env.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/reference.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"

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
  check_op({.name = "transposed a",
            .inputs = {f32({13, 7}), f32({13, 5})},
            .build = [](Inputs& in) { return matmul(in[0], in[1], true, false); }});
  check_op({.name = "transposed b",
            .inputs = {f32({7, 13}), f32({5, 13})},
            .build = [](Inputs& in) { return matmul(in[0], in[1], false, true); }});
  check_op({.name = "both transposed",
            .inputs = {f32({13, 7}), f32({5, 13})},
            .build = [](Inputs& in) { return matmul(in[0], in[1], true, true); }});
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
              return batch_norm(in[0], stats, in[3], in[4], 1e-3f, /*batch_stats=*/false, /*relu=*/true);
            },
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
              return batch_norm(in[0], stats, in[3], in[4], 1e-3f, /*batch_stats=*/false);
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
// batches' mean statistics. With ema_update skip the averages stay as they were.
TEST(Ops, BatchNormVirtualBatchesAreStridedAndTheirStatisticsAveraged) {
  constexpr std::int64_t m = 8, c = 3, v = 4, groups = m / v;
  const std::vector<float> values = random_floats(static_cast<std::size_t>(m * c), 61, -2.0f, 4.0f);
  for (const EmaUpdate ema : {EmaUpdate::collection, EmaUpdate::skip}) {
    Graph g(1);
    const Tensor x = placeholder(g, "x", f32({m, c}));
    const Tensor y = BatchNorm("bn", x, {.momentum = 0.5f, .epsilon = 1e-3f, .virtual_batch_size = v, .ema_update = ema});
    EXPECT_EQ(g.collection(kUpdateOps).size(), ema == EmaUpdate::skip ? 0u : 2u);
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
      const bool updated = ema == EmaUpdate::collection;
      EXPECT_NEAR(session.variable("bn/mean/EMA").data<float>()[ch], updated ? 0.5 * mean_of_means : 0.0, 1e-5);
      EXPECT_NEAR(session.variable("bn/variance/EMA").data<float>()[ch], updated ? 0.5 + 0.5 * mean_of_vars : 1.0, 1e-5);
    }
  }
  Graph g(1);
  EXPECT_THROW(BatchNorm("bn", placeholder(g, "x", f32({6, 3})), {.virtual_batch_size = 4}), Error);
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
