// Dynamic loss scaling (loss_scale.h) and its parts: count_nonfinite, guarded updates.
//
// The strongest check needs no tolerance: in float32 storage, scaling the loss by a
// power of two scales every gradient by it exactly (each backward op is linear in dy and
// float rounding commutes with powers of two away from overflow and underflow), and the
// update divides by it exactly; so a loss-scaled SGD run must equal the plain run bit for
// bit, step for step, except that it skips the step whose gradients overflowed.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>

#include "vk_test_env.h"
#include "core/error.h"
#include "core/rng.h"
#include "engine/graph/layers.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

Array filled(Shape shape, std::uint64_t seed) {
  Array a(DType::f32, std::move(shape));
  Rng rng(seed);
  for (float& v : a.data<float>()) v = rng.uniform(-1.0f, 1.0f);
  return a;
}

Array scalar_array(float v) {
  Array a(DType::f32, Shape{});
  a.data<float>()[0] = v;
  return a;
}

bool same_bits(const Array& a, const Array& b) {
  return a.shape() == b.shape() && a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

TEST(CountNonfinite, CountsInfinitiesAndNaNsButNotLargeOrTinyNumbers) {
  const float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  // One pass, and an axis long enough for two (partial counts, then their sum).
  for (const Shape& shape : {Shape{37, 53}, Shape{3, 70001}}) {
    Array x = filled(shape, 3);
    auto v = x.data<float>();
    std::int64_t want = 0;
    Rng rng(9);
    for (int i = 0; i < 40; ++i) {
      const std::size_t at = static_cast<std::size_t>(rng.uniform(0.0f, 1.0f) * static_cast<float>(v.size() - 1));
      const bool was_bad = !std::isfinite(v[at]);
      const float special[] = {inf, -inf, nan, std::numeric_limits<float>::max(), 1e-40f, -0.0f};
      v[at] = special[i % 6];
      want += (std::isfinite(v[at]) ? 0 : 1) - (was_bad ? 1 : 0);
    }
    Graph g(1);
    const Tensor in = placeholder(g, "x", f32(shape.dims()));
    Session session(g, device());
    const float got = session.run({{in, x}}, {count_nonfinite(in)})[0].data<float>()[0];
    EXPECT_EQ(got, static_cast<float>(want)) << to_string(shape);
  }
}

// A guarded momentum update: with count 0 it is the plain update of gradient * factor;
// with any other count it leaves the variable and its slot alone.
TEST(GuardedUpdate, SkipsOnAnOverflowAndOtherwiseScalesTheGradient) {
  for (bool overflow : {false, true}) {
    Graph guarded_graph(2), plain_graph(2);
    auto build = [](Graph& g, bool guarded) {
      const Tensor w = get_variable(g, "w", {7}, uniform(-1.0f, 1.0f));
      const Tensor grad = placeholder(g, "grad", f32({7}));
      const Optimizer opt = momentum(g, 0.1f, 0.9f);
      if (!guarded) return std::tuple{opt.apply_gradients({{grad, w}}), grad, Tensor()};
      const Tensor guard = placeholder(g, "guard", f32({2}));
      return std::tuple{opt.apply_gradients({{grad, w}}, guard), grad, guard};
    };
    const auto [guarded_op, guarded_grad, guard] = build(guarded_graph, true);
    const auto [plain_op, plain_grad, unused] = build(plain_graph, false);
    Session gs(guarded_graph, device()), ps(plain_graph, device());
    const Array grad = filled(Shape{7}, 4);
    Array scaled = grad;
    for (float& v : scaled.data<float>()) v *= 0.125f;
    Array guard_value(DType::f32, Shape{2});
    guard_value.data<float>()[0] = overflow ? 3.0f : 0.0f;
    guard_value.data<float>()[1] = 0.125f;
    const Array w0 = gs.variable("w");
    for (int step = 0; step < 2; ++step) {  // twice: the slot's value matters the second time
      gs.run({{guarded_grad, grad}, {guard, guard_value}}, {}, guarded_op);
      ps.run({{plain_grad, scaled}}, {}, plain_op);
    }
    if (overflow) {
      EXPECT_TRUE(same_bits(gs.variable("w"), w0));
      EXPECT_TRUE(same_bits(gs.variable("w/Momentum"), Array(DType::f32, Shape{7})));
    } else {
      EXPECT_TRUE(same_bits(gs.variable("w"), ps.variable("w")));
      EXPECT_TRUE(same_bits(gs.variable("w/Momentum"), ps.variable("w/Momentum")));
    }
  }
}

// A small classifier whose cost is multiplied by a fed factor (1e38 makes the gradients
// overflow float32 itself, so the check does not depend on float16).
struct Classifier {
  Tensor x, labels, factor, cost;
};

Classifier classifier(Graph& g) {
  Classifier c;
  c.x = placeholder(g, "x", f32({8, 6}));
  c.labels = placeholder(g, "labels", i32({8}));
  c.factor = placeholder(g, "factor", f32({}));
  const Tensor h = FullyConnected("fc0", c.x, 5, {.activation = [](Tensor t) { return relu(t); }});
  const Tensor logits = FullyConnected("fc1", h, 3);
  c.cost = reduce_mean(sparse_softmax_cross_entropy(logits, c.labels)) * c.factor;
  return c;
}

TEST(LossScaling, MatchesPlainSgdBitForBitSkipsTheOverflowAndAdaptsTheScale) {
  Graph scaled_graph(5), plain_graph(5);
  const Classifier s = classifier(scaled_graph), p = classifier(plain_graph);
  const ScaledTrainOp scaled_op =
      minimize_with_loss_scaling(sgd(scaled_graph, 0.5f), s.cost, {.initial_scale = 1024.0f, .growth_interval = 2});
  const std::vector<Tensor> plain_op = sgd(plain_graph, 0.5f).minimize(p.cost);
  Session ss(scaled_graph, device()), ps(plain_graph, device());
  const std::vector<std::string> weights = {"fc0/W", "fc0/b", "fc1/W", "fc1/b"};
  for (const std::string& name : weights) ASSERT_TRUE(same_bits(ss.variable(name), ps.variable(name))) << name;
  Array labels(DType::i32, Shape{8});
  for (int i = 0; i < 8; ++i) labels.data<std::int32_t>()[static_cast<std::size_t>(i)] = i % 3;
  // Factor per step, and the scale, good steps and skipped steps after it.
  struct Expect {
    float factor, scale, good, skipped;
  };
  const Expect steps[] = {{1.0f, 1024, 1, 0}, {1.0f, 2048, 0, 0}, {1e38f, 1024, 0, 1}, {1.0f, 1024, 1, 1},
                          {1.0f, 2048, 0, 1}};
  int step = 0;
  for (const Expect& e : steps) {
    SCOPED_TRACE("step " + std::to_string(step++));
    const Array x = filled(Shape{8, 6}, 100 + static_cast<std::uint64_t>(step));
    const std::vector<Array> out = ss.run({{s.x, x}, {s.labels, labels}, {s.factor, scalar_array(e.factor)}},
                                          {scaled_op.nonfinite}, scaled_op.train_op);
    const bool overflow = e.factor > 1.0f;
    EXPECT_EQ(out[0].data<float>()[0] > 0.0f, overflow);
    if (!overflow) ps.run({{p.x, x}, {p.labels, labels}, {p.factor, scalar_array(e.factor)}}, {}, plain_op);
    for (const std::string& name : weights) EXPECT_TRUE(same_bits(ss.variable(name), ps.variable(name))) << name;
    EXPECT_EQ(ss.variable(kLossScaleVariable).data<float>()[0], e.scale);
    EXPECT_EQ(ss.variable(kGoodStepsVariable).data<float>()[0], e.good);
    EXPECT_EQ(ss.variable(kSkippedStepsVariable).data<float>()[0], e.skipped);
  }
}

TEST(LossScaling, TheScaleStaysWithinOneAndTheMaximum) {
  Graph g(6);
  const Classifier c = classifier(g);
  const ScaledTrainOp op = minimize_with_loss_scaling(sgd(g, 0.1f), c.cost,
                                                      {.initial_scale = 2.0f, .growth_interval = 1, .max_scale = 4.0f});
  Session session(g, device());
  Array labels(DType::i32, Shape{8});
  const float inf = std::numeric_limits<float>::infinity();
  for (float factor : {1.0f, 1.0f, 1.0f, inf, inf, inf}) {
    session.run({{c.x, filled(Shape{8, 6}, 7)}, {c.labels, labels}, {c.factor, scalar_array(factor)}}, {}, op.train_op);
    const float scale = session.variable(kLossScaleVariable).data<float>()[0];
    EXPECT_GE(scale, 1.0f);
    EXPECT_LE(scale, 4.0f);
  }
  EXPECT_EQ(session.variable(kLossScaleVariable).data<float>()[0], 1.0f);
  EXPECT_EQ(session.variable(kSkippedStepsVariable).data<float>()[0], 3.0f);
  EXPECT_THROW(minimize_with_loss_scaling(sgd(g, 0.1f), c.cost, {.initial_scale = 0.5f}), Error);
}

// With float16 storage the scale's arithmetic must stay float32: 32768 doubled is
// 65536, beyond float16's largest number (65504); rounded on the way it became infinite
// and the clamp made it 2^24, which overflowed every later step.
TEST(LossScaling, TheScaleGrowsPastFloat16sRangeWithFloat16Storage) {
  Graph g(6);
  const Classifier c = classifier(g);
  const ScaledTrainOp op =
      minimize_with_loss_scaling(sgd(g, 0.1f), c.cost, {.initial_scale = 32768.0f, .growth_interval = 1});
  Session session(g, device(), {.f16_storage = true});
  Array labels(DType::i32, Shape{8});
  for (const float want : {65536.0f, 131072.0f, 262144.0f}) {
    session.run({{c.x, filled(Shape{8, 6}, 8)}, {c.labels, labels}, {c.factor, scalar_array(1.0f)}}, {}, op.train_op);
    EXPECT_EQ(session.variable(kLossScaleVariable).data<float>()[0], want);
  }
  EXPECT_EQ(session.variable(kSkippedStepsVariable).data<float>()[0], 0.0f);
}

}  // namespace
}  // namespace vkp::test
