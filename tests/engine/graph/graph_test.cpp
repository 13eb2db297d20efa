// Building graphs: shapes checked as nodes are made, scopes and reuse, and the errors a
// user sees for bad input, each naming what was expected and what was given.
#include <gtest/gtest.h>

#include <cmath>

#include "vk_test_env.h"
#include "core/error.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/feed_stager.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/program.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;
using graph::i32;

// Runs fn and returns the message of the Error it throws (fails if none).
template <class Fn>
std::string error_of(Fn fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "no error";
  return {};
}

TEST(Graph, ConvChannelMismatchNamesTheOpAndBothCounts) {
  Graph g;
  const Tensor x = placeholder(g, "image", f32({kUnknown, 28, 28, 3}));
  VariableScope scope(g, "conv1");
  const Tensor w = get_variable(g, "W", {5, 5, 1, 32}, he_normal());
  EXPECT_EQ(error_of([&] { conv2d(x, w); }), "conv1/conv2d: input has 3 channels, W expects 1");
}

TEST(Graph, MatmulMismatchNamesTheShapes) {
  Graph g;
  const Tensor a = placeholder(g, "a", f32({kUnknown, 784})), b = placeholder(g, "b", f32({100, 10}));
  const std::string message = error_of([&] { matmul(a, b); });
  EXPECT_NE(message.find("matmul: inner dimensions differ: f32[?, 784] x f32[100, 10] (784 vs 100)"), std::string::npos)
      << message;
}

TEST(Graph, UnknownBatchIsInferredThrough) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 4, 4, 2}));
  const Tensor y = FullyConnected("fc", x, 3);
  EXPECT_EQ(y.dims(), (std::vector<std::int64_t>{kUnknown, 3}));
  EXPECT_EQ(y.name(), "fc/output");
}

TEST(Graph, VariablesFollowScopeAndReuseRules) {
  Graph g;
  {
    VariableScope s(g, "layer");
    const Tensor w = get_variable(g, "W", {3, 4}, zeros());
    EXPECT_EQ(std::get<VariableAttrs>(w.node().attrs).var_name, "layer/W");
    EXPECT_NE(error_of([&] { get_variable(g, "W", {3, 4}, zeros()); }).find("layer/W already exists"), std::string::npos);
  }
  {
    VariableScope s(g, "layer", Reuse::yes);
    EXPECT_EQ(get_variable(g, "W", {3, 4}, zeros()), g.find_variable("layer/W"));
    EXPECT_NE(error_of([&] { get_variable(g, "V", {2}, zeros()); }).find("layer/V does not exist"), std::string::npos);
    EXPECT_NE(error_of([&] { get_variable(g, "W", {4, 3}, zeros()); }).find("exists with shape [3, 4], requested [4, 3]"),
              std::string::npos);
  }
  VariableScope automatic(g, "layer", Reuse::automatic);
  EXPECT_EQ(get_variable(g, "W", {3, 4}, zeros()), g.find_variable("layer/W"));
  EXPECT_TRUE(get_variable(g, "V", {2}, zeros()).valid());
}

TEST(Graph, TowersPrefixOpsButNotVariables) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 5}));
  Tensor y0, y1;
  {
    TowerContext tower(g, "tower0", 0, true);
    y0 = FullyConnected("fc", x, 2);
  }
  {
    TowerContext tower(g, "tower1", 1, false);
    VariableScope reuse(g, "", Reuse::yes);
    y1 = FullyConnected("fc", x, 2);
    EXPECT_FALSE(g.tower().is_training);
  }
  EXPECT_EQ(y0.name(), "tower0/fc/output");
  EXPECT_EQ(y1.name(), "tower1/fc/output");
  EXPECT_EQ(g.variables().size(), 2u);
  EXPECT_TRUE(g.find_variable("fc/W").valid());
  EXPECT_TRUE(g.tower().is_training);
}

TEST(Graph, LayersUseTensorpackVariableNames) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 8, 8, 3}));
  Tensor t = Conv2D("conv0", x, 4, {3, 3});
  t = BatchNorm("bn", t);
  t = Conv2DTranspose("deconv", t, 2, {3, 3}, {.strides = {2, 2}});
  FullyConnected("fc0", t, 3);
  std::vector<std::string> names;
  for (const Tensor& v : g.variables()) names.push_back(std::get<VariableAttrs>(v.node().attrs).var_name);
  EXPECT_EQ(names, (std::vector<std::string>{"conv0/W", "conv0/b", "bn/beta", "bn/gamma", "bn/mean/EMA",
                                             "bn/variance/EMA", "deconv/W", "deconv/b", "fc0/W", "fc0/b"}));
  EXPECT_EQ(g.collection(kUpdateOps).size(), 2u);
  EXPECT_EQ(g.trainable_variables().size(), 8u);
}

TEST(Graph, InitializersAreSeededAndScaled) {
  const Array a = initial_value(he_normal(), Shape{3, 3, 64, 64}, 7, "conv/W");
  const Array b = initial_value(he_normal(), Shape{3, 3, 64, 64}, 7, "conv/W");
  const Array c = initial_value(he_normal(), Shape{3, 3, 64, 64}, 8, "conv/W");
  EXPECT_EQ(std::vector<float>(a.data<float>().begin(), a.data<float>().end()),
            std::vector<float>(b.data<float>().begin(), b.data<float>().end()));
  EXPECT_NE(a.data<float>()[0], c.data<float>()[0]);
  double sum2 = 0;
  for (float v : a.data<float>()) sum2 += double{v} * v;
  // He: variance 2 / fan_in with fan_in = 3 * 3 * 64.
  EXPECT_NEAR(sum2 / static_cast<double>(a.numel()), 2.0 / 576, 0.1 * 2.0 / 576);
  const Array u = initial_value(glorot_uniform(), Shape{100, 300}, 1, "fc/W");
  const float limit = std::sqrt(6.0f / 400);
  for (float v : u.data<float>()) ASSERT_LE(std::abs(v), limit);
}

TEST(Graph, BadFeedsAndFetchesAreNamedErrors) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({kUnknown, 3}));
  const Tensor y = reduce_sum(x * 2.0f);
  Graph other;
  const Tensor z = placeholder(other, "z", f32({2}));
  Session session(g, device());
  EXPECT_NE(error_of([&] { session.run({{x, Array(DType::i32, Shape{2, 3})}}, {y}); })
                .find("feed for 'x' is i32[2, 3]; the placeholder takes f32[?, 3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.run({{x, Array(DType::f32, Shape{2, 4})}}, {y}); }).find("the placeholder takes f32[?, 3]"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.run({}, {y}); }).find("placeholder 'x' f32[?, 3] is needed but not fed"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.run({{x, Array(DType::f32, Shape{2, 3})}}, {z}); }).find("fetch 'z' is not a tensor of this graph"),
            std::string::npos);
  EXPECT_NE(error_of([&] { session.variable("nope"); }).find("no variable named nope"), std::string::npos);
  EXPECT_NE(error_of([&] { session.set_hyperparameter("learning_rate", 0.1f); }).find("no hyperparameter named 'learning_rate'"),
            std::string::npos);
  Program& p = session.program({{x, f32({2, 3})}}, {y});
  std::vector<Array> out;
  const Array wrong(DType::f32, Shape{5, 3});
  EXPECT_NE(error_of([&] { p.run(std::span(&wrong, 1), out); }).find("compiled for f32[2, 3]"), std::string::npos);
}

TEST(Graph, GradientsOfNonScalarCostOrThroughStopGradient) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({4}));
  EXPECT_NE(error_of([&] { gradients(x * 2.0f, {x}); }).find("not a scalar f32"), std::string::npos);
  const std::vector<Tensor> none = gradients(reduce_sum(stop_gradient(x) * x), {x});
  EXPECT_TRUE(none[0].valid());  // through the second factor only
  EXPECT_FALSE(gradients(reduce_sum(stop_gradient(x)), {x})[0].valid());
}

}  // namespace
}  // namespace vkp::test

namespace vkp::test {
namespace {

using namespace vkp::graph;

// Two variants of one program: the host writes the next feeds into one while the other
// runs (StagingInput), and each run sees its own feeds.
TEST(Program, VariantsDoubleBufferTheFeeds) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({1000}));
  const Tensor y = x * 2.0f;
  Session session(g, device());
  const std::vector<Tensor> fetches = {y, x};
  const std::vector<FeedSpec> feeds{{x, f32({1000})}};
  std::unique_ptr<Program> p = compile({g, feeds, fetches, {}}, {device(), session.variables(), session.scalars()},
                                       {.name = "staged", .variants = 2});
  ASSERT_EQ(p->variants(), 2);
  std::vector<Array> out;
  const std::vector<float> a = random_floats(1000, 1), b = random_floats(1000, 2);
  const Array fa = Array::from<float>(Shape{1000}, a), fb = Array::from<float>(Shape{1000}, b);
  p->write_feeds(std::span(&fa, 1), 0);
  p->submit(0);
  p->write_feeds(std::span(&fb, 1), 1);  // while variant 0 may still run
  p->wait(out);
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(out[0].data<float>()[i], 2.0f * a[i]);
  EXPECT_EQ(std::vector<float>(out[1].data<float>().begin(), out[1].data<float>().end()), a);
  p->submit(1);
  p->wait(out);
  for (std::size_t i = 0; i < 1000; ++i) ASSERT_EQ(out[0].data<float>()[i], 2.0f * b[i]);
}

// FeedStager, the double buffering every step runner uses: the staged batch is the one
// the next run computes on, and a batch of another shape is refused, naming the input.
TEST(Program, FeedStagerRunsEachStepOnTheBatchStagedForIt) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({-1}));
  const Tensor y = x * 3.0f;
  Session session(g, device());
  Program& p = session.program({{x, f32({100})}}, {y}, {}, 2);
  FeedStager stager;
  std::vector<Array> batches;
  for (int i = 0; i < 4; ++i) batches.push_back(Array::from<float>(Shape{100}, random_floats(100, 40 + i)));
  std::vector<Array> out;
  for (int i = 0; i < 3; ++i) {
    const std::vector<Array> current{batches[static_cast<std::size_t>(i)]};
    session.submit_program(p, stager.prepare(p, current));
    stager.stage(p, std::vector<Array>{batches[static_cast<std::size_t>(i + 1)]}, "test");
    session.wait_program(p, out);
    for (std::size_t j = 0; j < 100; ++j)
      ASSERT_EQ(out[0].data<float>()[j], batches[static_cast<std::size_t>(i)].data<float>()[j] * 3.0f) << "run " << i;
  }
  const std::string message = error_of([&] {
    stager.stage(p, std::vector<Array>{Array::from<float>(Shape{99}, random_floats(99, 1))}, "tower 1");
  });
  EXPECT_NE(message.find("tower 1: StagingInput needs batches of one shape; input 'x' changed from f32[100] to [99]"),
            std::string::npos)
      << message;
}

// run() keeps at most SessionOptions::cached_programs of its own programs, releasing the
// least recently run (with their device memory); programs handed out by program() stay
// valid whatever run() compiles; a released shape compiles again and computes the same.
TEST(Session, RunsProgramCacheIsBoundedAndHandedOutProgramsStay) {
  Graph g;
  const Tensor x = placeholder(g, "x", f32({-1, 3}));
  const Tensor y = x * 2.0f + 1.0f;
  Session session(g, device(), {.cached_programs = 3});
  Program& held = session.program({{x, f32({2, 3})}}, {y});
  const auto batch = [](std::int64_t rows) {
    return Array::from<float>(Shape{rows, 3}, random_floats(static_cast<std::size_t>(rows) * 3, rows));
  };
  const auto check = [&](const Array& in, const Array& out) {
    for (std::size_t i = 0; i < in.data<float>().size(); ++i) ASSERT_EQ(out.data<float>()[i], in.data<float>()[i] * 2.0f + 1.0f);
  };
  const std::uint64_t before = device().memory().allocated_bytes();
  std::uint64_t first = 0;  // device memory of run()'s first program
  for (std::int64_t rows = 3; rows <= 10; ++rows) {
    const Array in = batch(rows);
    check(in, session.run({{x, in}}, {y})[0]);
    if (rows == 3) first = device().memory().allocated_bytes() - before;
    EXPECT_LE(session.program_count(), 1u + 3u) << "after " << rows - 2 << " shapes";
  }
  EXPECT_EQ(session.program_count(), 4u);
  // Three programs of about the first's size (eight would hold about 8 times it).
  EXPECT_LT(device().memory().allocated_bytes() - before, 4 * first) << "released programs kept their memory";
  // Rows 3 was released long ago: compiled again, the same results.
  const Array again = batch(3);
  check(again, session.run({{x, again}}, {y})[0]);
  // The handed-out program (rows 2) was never released.
  const Array two = batch(2);
  std::vector<Array> out;
  session.run_program(held, std::span(&two, 1), out);
  check(two, out[0]);
}

}  // namespace
}  // namespace vkp::test
