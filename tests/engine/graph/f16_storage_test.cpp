// Float16 storage (CompileOptions::f16_storage, f16_storage.h): which tensors a program
// halves, what that saves, and how far its results are from float32's.
//
// Tolerance of the gradients: every stored activation and activation gradient is
// rounded to float16 (relative error at most 2^-11 = 4.9e-4 per element) and the
// errors pass through the layers. The step below stores about a dozen such tensors
// on each path from the loss to a weight; bounding the norm of the gradient error by
// 2^-11 per rounding on that path and a factor 2 for the way back gives 12 * 2 * 2^-11
// = 1.2%, so a gradient must be within 1.5% of float32's in norm. A kernel that reads
// float16 as float32, or the reverse, gives errors of order one, not of order 2^-11.
#include "engine/graph/internal/f16_storage.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "core/error.h"
#include "core/half.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

Array random_images(std::int64_t n, std::uint64_t seed, bool half_values = false) {
  Array a(DType::f32, Shape{n, 16, 16, 1});
  Rng rng(seed);
  for (float& v : a.data<float>()) v = rng.uniform(0.0f, 1.0f);
  if (half_values)
    for (float& v : a.data<float>()) v = to_float(to_half(v));
  return a;
}

Array labels(std::int64_t n) {
  Array a(DType::i32, Shape{n});
  for (std::int64_t i = 0; i < n; ++i) a.data<std::int32_t>()[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * 7 % 10);
  return a;
}

constexpr float kLossScale = 1024.0f;

// The bundled example's convnet, smaller: conv-BNReLU-pool twice, FC with relu, FC.
struct Convnet {
  Tensor image, label, loss;
  std::vector<Tensor> variables, grads;
};

Convnet convnet(Graph& g) {
  Convnet m;
  m.image = placeholder(g, "image", f32({kUnknown, 16, 16, 1}));
  m.label = placeholder(g, "label", i32({kUnknown}));
  TowerContext tower(g, "tower0", 0, true);
  Tensor t = m.image;
  for (const auto& [name, filters] : {std::pair{"conv0", 8}, std::pair{"conv1", 16}}) {
    t = Conv2D(name, t, filters, {3, 3}, {.use_bias = false});
    t = BNReLU(std::string(name) + "_bn", t);
    t = MaxPooling(std::string(name) + "_pool", t, {2, 2});
  }
  t = FullyConnected("fc0", t, 32, {.activation = [](Tensor x) { return relu(x); }});
  const Tensor logits = FullyConnected("linear", t, 10);
  m.loss = reduce_mean(sparse_softmax_cross_entropy(logits, m.label));
  m.variables = g.trainable_variables();
  // Loss scaling: the gradients of kLossScale * loss, so that the activations'
  // gradients (a loss averaged over the batch gives them magnitudes near 1e-5) are
  // normal float16 numbers rather than subnormals with few significant bits.
  m.grads = gradients(m.loss, m.variables, scalar(g, kLossScale));
  return m;
}

struct Step {
  std::vector<Array> outputs;  // loss, then the gradients
  std::uint64_t arena_bytes = 0;
  int f16_tensors = 0;
};

Step run_step(bool f16, bool fuse = true, bool images_rounded_to_half = false, vk::Device& dev = device()) {
  Graph g(3);
  const Convnet m = convnet(g);
  Session session(g, dev, {.fuse = fuse, .f16_storage = f16});
  std::vector<Tensor> fetches{m.loss};
  fetches.insert(fetches.end(), m.grads.begin(), m.grads.end());
  const std::int64_t n = 24;
  Program& p = session.program({{m.image, f32({n, 16, 16, 1})}, {m.label, i32({n})}}, fetches);
  Step s;
  session.run_program(p, std::vector<Array>{random_images(n, 5, images_rounded_to_half), labels(n)}, s.outputs);
  for (std::size_t i = 1; i < s.outputs.size(); ++i)
    for (float& v : s.outputs[i].data<float>()) v /= kLossScale;
  s.arena_bytes = p.plan().memory.arena_bytes;
  s.f16_tensors = p.plan().f16_tensors;
  return s;
}

double norm(std::span<const float> v) {
  double sum = 0;
  for (float x : v) sum += double(x) * x;
  return std::sqrt(sum);
}

double relative_difference(const Array& got, const Array& want) {
  const auto g = got.data<float>(), w = want.data<float>();
  double sum = 0;
  for (std::size_t i = 0; i < w.size(); ++i) sum += (double(g[i]) - w[i]) * (double(g[i]) - w[i]);
  return std::sqrt(sum) / std::max(norm(w), 1e-30);
}

// The step in float32 and with float16 storage on `dev`, as the file's head says.
void expect_halved_and_near_float32(vk::Device& dev) {
  for (bool fuse : {true, false}) {
    SCOPED_TRACE(fuse ? "fused" : "op by op");
    const Step full = run_step(false, fuse, false, dev), half = run_step(true, fuse, false, dev);
    const Step nudged = run_step(false, fuse, true, dev);  // float32, the images rounded to float16
    EXPECT_EQ(full.f16_tensors, 0);
    // The ten activations and activation gradients of [24, 16, 16, 8] and [24, 8, 8, 16]
    // at least; the arena also holds the GEMMs' float32 panels, at this size nearly half.
    EXPECT_GE(half.f16_tensors, 10);
    EXPECT_LT(half.arena_bytes, full.arena_bytes);
    ASSERT_EQ(half.outputs.size(), full.outputs.size());
    EXPECT_NEAR(half.outputs[0].data<float>()[0], full.outputs[0].data<float>()[0],
                2e-3 * std::abs(full.outputs[0].data<float>()[0]));
    for (std::size_t i = 1; i < full.outputs.size(); ++i) {
      const double d = relative_difference(half.outputs[i], full.outputs[i]);
      const double sensitivity = relative_difference(nudged.outputs[i], full.outputs[i]);
      EXPECT_LT(d, 4 * sensitivity + 0.006) << "gradient " << i << "; rounding the images alone moves it " << sensitivity;
      EXPECT_GT(norm(full.outputs[i].data<float>()), 0.0) << "gradient " << i;
    }
  }
}

TEST(F16Storage, AConvnetStepHalvesItsActivationsAndItsGradientsStayNearFloat32) {
  expect_halved_and_near_float32(device());
}

// Without storageBuffer16BitAccess (SwiftShader, older mobile drivers) the kernels' packed
// builds hold two halves a 32-bit word: the same tensors halve, the memory plan is the
// same size as with 16-bit storage, and the results are as near float32.
TEST(F16Storage, ADeviceWithoutSixteenBitStorageHalvesTheSameTensorsPacked) {
  vk::Device& packed = packed_f16_device();
  ASSERT_FALSE(packed.features().f16_storage);
  expect_halved_and_near_float32(packed);
  const Step native = run_step(/*f16=*/true, /*fuse=*/true, /*images_rounded_to_half=*/false, device()),
             packed_step = run_step(/*f16=*/true, /*fuse=*/true, /*images_rounded_to_half=*/false, packed);
  EXPECT_EQ(packed_step.f16_tensors, native.f16_tensors);
  EXPECT_EQ(packed_step.arena_bytes, native.arena_bytes);
}

// A fetched tensor is float32, and so is one a kernel without a float16 build reads:
// here tanh's output feeds softmax, so only the matmul's output (read by tanh) halves;
// fused, the tanh is the matmul's epilogue and nothing is left to halve. And a tensor
// under kMinF16Elements stays float32 wherever it goes (rows 40 -> 8: 256 elements).
TEST(F16Storage, OnlyTensorsThatEveryKernelTouchingThemHandlesAreHalved) {
  for (const std::int64_t rows : {40, 8})
    for (bool fuse : {false, true}) {
      Graph g(5);
      const Tensor x = placeholder(g, "x", f32({rows, 30}));
      Array weights(DType::f32, Shape{30, 32});
      Rng wr(9);
      for (float& v : weights.data<float>()) v = wr.uniform(-1.0f, 1.0f);
      const Tensor w = constant(g, weights);
      const Tensor h = matmul(x, w);
      const Tensor y = softmax(graph::tanh(h));
      Session session(g, device(), {.fuse = fuse, .f16_storage = true});
      Program& p = session.program({{x, f32({rows, 30})}}, {y});
      EXPECT_EQ(p.plan().f16_tensors, fuse || rows * 32 < kMinF16Elements ? 0 : 1)
          << (fuse ? "fused, " : "op by op, ") << rows << " rows";
      Session plain(g, device(), {.fuse = fuse});
      Array in(DType::f32, Shape{rows, 30});
      Rng rng(4);
      for (float& v : in.data<float>()) v = rng.uniform(-1.0f, 1.0f);
      const Array a = session.run({{x, in}}, {y})[0], b = plain.run({{x, in}}, {y})[0];
      EXPECT_LT(relative_difference(a, b), 1e-3);
    }
}

// The shape ops a residual network's shortcuts use (pad, slice, concat, transpose) keep
// float16 too, forward and backward (pad's gradient is a slice and the reverse). No
// ReLU or batch norm here, so the error is a few float16 roundings: 2^-11 each.
TEST(F16Storage, ShapeOpsKeepFloat16ForwardAndBackward) {
  auto run = [](bool f16, int& halved) {
    Graph g(8);
    const Tensor x = placeholder(g, "x", f32({4, 6, 6, 8}));
    const Tensor y = Conv2D("conv", x, 8, {3, 3});
    const Tensor padded = pad(y, {0, 1, 1, 0}, {0, 1, 1, 4});             // [4, 8, 8, 12]
    const Tensor cut = slice(padded, {0, 1, 0, 2}, {4, 6, 6, 8});         // [4, 6, 6, 8]
    const Tensor joined = transpose(concat({cut, y}, 3), {0, 3, 1, 2});   // [4, 16, 6, 6]
    const Tensor loss = reduce_sum(square(joined));
    const std::vector<Tensor> grads = gradients(loss, g.trainable_variables());
    Session session(g, device(), {.f16_storage = f16});
    std::vector<Tensor> fetches{loss};
    fetches.insert(fetches.end(), grads.begin(), grads.end());
    Array in(DType::f32, Shape{4, 6, 6, 8});
    Rng rng(2);
    for (float& v : in.data<float>()) v = rng.uniform(-1.0f, 1.0f);
    Program& p = session.program({{x, f32({4, 6, 6, 8})}}, fetches);
    halved = p.plan().f16_tensors;
    std::vector<Array> out;
    session.run_program(p, std::vector<Array>{in}, out);
    return out;
  };
  int full_halved = 0, halved = 0;
  const std::vector<Array> full = run(false, full_halved), half = run(true, halved);
  EXPECT_EQ(full_halved, 0);
  EXPECT_GE(halved, 8);  // y, padded, cut, the concat, its transpose, and their gradients
  for (std::size_t i = 0; i < full.size(); ++i) EXPECT_LT(relative_difference(half[i], full[i]), 4e-3) << "fetch " << i;
}

// State arithmetic stays float32 (f16_storage.h): an exponential moving average of a
// 2048-element variable, updated by elementwise ops big enough to halve, comes out of a
// float16-storage session bit for bit as out of a float32 one.
TEST(F16Storage, AnAssignsValueIsComputedInFloat32) {
  auto run = [](bool f16) {
    Graph g(4);
    const Tensor w = get_variable(g, "w", {2048}, uniform(-1.0f, 1.0f));
    const Tensor ema = get_variable(g, "ema", {2048}, zeros(), false);
    const Tensor update = assign(ema, ema * 0.999f + w * 0.001f);
    // Op by op, so that the intermediate products are stored (fused, they never are).
    Session session(g, device(), {.fuse = false, .f16_storage = f16});
    for (int i = 0; i < 3; ++i) session.run({}, {}, {update});
    return session.variable("ema");
  };
  const Array full = run(false), half = run(true);
  EXPECT_EQ(0, std::memcmp(full.bytes().data(), half.bytes().data(), full.nbytes()));
}

}  // namespace
}  // namespace vkp::test
