// Epilogue fusion (fusion.h): programs compiled with CompileOptions::fuse compute what
// the same graph computes op by op (every fused kernel against the unfused reference),
// in fewer dispatches, and leave alone what they must not absorb.
//
// Tolerance: the fused GEMM adds the bias and applies the activation in the same float
// operations as the separate kernels, but the compiler may contract a multiply and an
// add into one fma in either; 1e-6 relative (2^-20) covers a few such roundings, far
// below any difference a wrong epilogue makes (test_checker proves compare() rejects
// one element off by more than its tolerance).
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "vk_test_env.h"
#include "core/rng.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

Array random_array(Shape shape, std::uint64_t seed) {
  Array a(DType::f32, std::move(shape));
  Rng rng(seed);
  for (float& v : a.data<float>()) v = rng.uniform(-1.0f, 1.0f);
  return a;
}

std::vector<double> tolerances(const Array& want) {
  std::vector<double> t;
  for (float v : want.data<float>()) t.push_back(std::ldexp(std::max(1.0, double(std::abs(v))), -20));
  return t;
}

void expect_close(const Array& got, const Array& want, const std::string& what) {
  ASSERT_EQ(got.shape(), want.shape()) << what;
  const auto w = want.data<float>();
  EXPECT_EQ(compare(got.data<float>(), std::vector<double>(w.begin(), w.end()), tolerances(want)), "") << what;
}

// One program of `graph` in each mode: the outputs of `runs` runs and the dispatches.
struct Both {
  std::vector<std::vector<Array>> fused, unfused;
  std::size_t fused_dispatches = 0, unfused_dispatches = 0;
};

Both run_both(Graph& g, const std::vector<FeedSpec>& specs, const std::vector<Array>& feeds,
              const std::vector<Tensor>& fetches, const std::vector<Tensor>& targets, int runs) {
  Both both;
  for (bool fuse : {true, false}) {
    Session session(g, device(), {.fuse = fuse});
    Program& p = session.program(specs, fetches, targets);
    (fuse ? both.fused_dispatches : both.unfused_dispatches) = p.dispatch_count();
    auto& outputs = fuse ? both.fused : both.unfused;
    for (int i = 0; i < runs; ++i) {
      std::vector<Array> out;
      session.run_program(p, feeds, out);
      outputs.push_back(std::move(out));
    }
  }
  return both;
}

// Every fetch of every run agrees between the two modes.
void expect_runs_agree(const Both& both, const std::vector<Tensor>& fetches) {
  for (std::size_t run = 0; run < both.fused.size(); ++run)
    for (std::size_t i = 0; i < fetches.size(); ++i)
      expect_close(both.fused[run][i], both.unfused[run][i], "run " + std::to_string(run) + " " + fetches[i].name());
}

// Class labels (i * step) % 10 for a batch of n.
Array class_labels(std::int64_t n, std::int32_t step) {
  Array a(DType::i32, Shape{n});
  for (std::int64_t i = 0; i < n; ++i)
    a.data<std::int32_t>()[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(i * step % 10);
  return a;
}

// `fetches` followed by the named variables.
std::vector<Tensor> with_variables(Graph& g, std::vector<Tensor> fetches, std::initializer_list<const char*> names) {
  for (const char* name : names) fetches.push_back(g.find(name));
  return fetches;
}

// The fused program saves more than `saved` dispatches.
void expect_saves_more_than(const Both& both, std::size_t saved) {
  EXPECT_LT(both.fused_dispatches + saved, both.unfused_dispatches)
      << "fused " << both.fused_dispatches << ", unfused " << both.unfused_dispatches;
}

TEST(Fusion, AFullyConnectedLayerWithEachActivationIsOneGemmForward) {
  const std::pair<std::string, Activation> activations[] = {
      {"relu", [](Tensor t) { return relu(t); }},
      {"sigmoid", [](Tensor t) { return sigmoid(t); }},
      {"tanh", [](Tensor t) { return graph::tanh(t); }},
      {"leaky_relu", [](Tensor t) { return leaky_relu(t, 0.1f); }},
      {"elu", [](Tensor t) { return elu(t, 0.7f); }},
      {"gelu", [](Tensor t) { return gelu(t); }},
  };
  for (const auto& [name, act] : activations) {
    Graph g(7);
    const Tensor x = placeholder(g, "x", f32({37, 23}));
    const Tensor y = FullyConnected("fc", x, 19, {.activation = act, .bias_initializer = uniform(-1.0f, 1.0f)});
    const Both both = run_both(g, {{x, f32({37, 23})}}, {random_array(Shape{37, 23}, 1)}, {y}, {}, 1);
    expect_close(both.fused[0][0], both.unfused[0][0], name);
    // The bias add and the activation are the GEMM's epilogue.
    EXPECT_EQ(both.fused_dispatches + 2, both.unfused_dispatches) << name;
  }
}

// An MLP with a residual connection trained for three steps: the losses and every
// variable after them agree, and the fused step runs fewer dispatches (forward: bias,
// residual and activation; backward: the activations' gradients gate the GEMMs that
// compute dy).
TEST(Fusion, ATrainingStepMatchesTheUnfusedOne) {
  Graph g(11);
  const Tensor x = placeholder(g, "x", f32({64, 30}));
  const Tensor labels = placeholder(g, "labels", i32({64}));
  const Tensor h1 = FullyConnected("fc1", x, 24, {.activation = [](Tensor t) { return relu(t); }});
  const Tensor h2 = FullyConnected("fc2", h1, 24);
  const Tensor h3 = graph::tanh(h2 + h1);  // residual
  const Tensor logits = FullyConnected("fc3", h3, 10);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  const std::vector<Tensor> train = sgd(g, 0.1f).minimize(loss);
  const std::vector<Tensor> fetches = with_variables(g, {loss}, {"fc1/W", "fc1/b", "fc2/W", "fc2/b", "fc3/W", "fc3/b"});
  const Both both = run_both(g, {{x, f32({64, 30})}, {labels, i32({64})}},
                             {random_array(Shape{64, 30}, 3), class_labels(64, 1)}, fetches, train, 3);
  expect_runs_agree(both, fetches);
  expect_saves_more_than(both, 6);
}

// Convolutions: a Conv2D and a stride-1 Conv2DTranspose with bias and activation are one
// dispatch forward; trained for two steps with the fused backward (the relu gradient
// gating the implicit-GEMM input gradient), every variable agrees with the unfused run.
TEST(Fusion, ConvolutionsTakeTheirBiasActivationAndGate) {
  Graph g(13);
  const Tensor x = placeholder(g, "x", f32({4, 9, 7, 3}));
  const Tensor labels = placeholder(g, "labels", i32({4}));
  const Activation relu_ = [](Tensor t) { return relu(t); };
  const Tensor c1 = Conv2D("conv1", x, 8, {3, 3}, {.activation = relu_, .bias_initializer = uniform(-0.5f, 0.5f)});
  const Tensor c2 = Conv2D("conv2", c1, 8, {3, 3}, {.activation = [](Tensor t) { return elu(t, 0.7f); }});
  const Tensor t1 = Conv2DTranspose("deconv", c2, 4, {3, 3}, {.activation = relu_});
  const Tensor logits = FullyConnected("fc", t1, 10);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  const std::vector<Tensor> train = sgd(g, 0.05f).minimize(loss);
  const std::vector<Tensor> fetches =
      with_variables(g, {loss, c1, t1}, {"conv1/W", "conv1/b", "conv2/W", "conv2/b", "deconv/W", "deconv/b"});
  const Both both = run_both(g, {{x, f32({4, 9, 7, 3})}, {labels, i32({4})}},
                             {random_array(Shape{4, 9, 7, 3}, 5), class_labels(4, 3)}, fetches, train, 2);
  expect_runs_agree(both, fetches);
  expect_saves_more_than(both, 6);
}

// An elementwise chain over a full-shape input, a vector along the last axis and one
// value is one dispatch, as is its gradient's chain; trained for two steps (swish
// activations, a squared error), everything agrees with the op-by-op run.
TEST(Fusion, ElementwiseChainsAreOneDispatch) {
  {
    Graph g(3);
    const Tensor x = placeholder(g, "x", f32({13, 7}));
    const Tensor b = constant(g, random_array(Shape{7}, 8), "b");
    const Tensor s = constant(g, random_array(Shape{1}, 9), "s");
    const Tensor y = graph::tanh((x + b) * 2.0f) - x * s;
    const Both both = run_both(g, {{x, f32({13, 7})}}, {random_array(Shape{13, 7}, 10)}, {y}, {}, 1);
    expect_close(both.fused[0][0], both.unfused[0][0], "y");
    EXPECT_EQ(both.fused_dispatches, 1u) << "unfused " << both.unfused_dispatches;
  }
  Graph g(4);
  const Tensor x = placeholder(g, "x", f32({32, 12}));
  const Tensor target = placeholder(g, "target", f32({32, 4}));
  const Tensor h = FullyConnected("fc1", x, 16);
  const Tensor swish = h * sigmoid(h);
  const Tensor out = FullyConnected("fc2", swish, 4);
  const Tensor loss = reduce_mean(square(out - target));
  const std::vector<Tensor> train = momentum(g, 0.05f, 0.9f).minimize(loss);
  const std::vector<Tensor> fetches = with_variables(g, {loss}, {"fc1/W", "fc1/b", "fc2/W", "fc2/b"});
  const Both both = run_both(g, {{x, f32({32, 12})}, {target, f32({32, 4})}},
                             {random_array(Shape{32, 12}, 11), random_array(Shape{32, 4}, 12)}, fetches, train, 2);
  expect_runs_agree(both, fetches);
  expect_saves_more_than(both, 4);
}

// A fetched tensor must be stored: nothing that is fetched is absorbed, and every value
// comes out.
TEST(Fusion, AFetchedIntermediateIsNotAbsorbed) {
  Graph g(5);
  const Tensor x = placeholder(g, "x", f32({9, 6}));
  const Tensor w = constant(g, random_array(Shape{6, 4}, 2), "w");
  const Tensor z = matmul(x, w);
  const Tensor y = relu(z);
  const Tensor u = graph::exp(y);  // y is fetched: no chain through it either
  const Tensor v = u * 3.0f;
  const Both both = run_both(g, {{x, f32({9, 6})}}, {random_array(Shape{9, 6}, 4)}, {z, y, v}, {}, 1);
  EXPECT_EQ(both.fused_dispatches + 1, both.unfused_dispatches) << "only exp and the multiply chain";
  expect_close(both.fused[0][0], both.unfused[0][0], "z");
  expect_close(both.fused[0][1], both.unfused[0][1], "y");
  expect_close(both.fused[0][2], both.unfused[0][2], "v");
}

}  // namespace
}  // namespace vkp::test
