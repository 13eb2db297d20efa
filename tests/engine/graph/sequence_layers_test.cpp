// Sequence layers against independent references written here from the published
// equations (TensorFlow's LSTMCell and GRUCell, scaled dot-product attention), in
// double, from the variables the session holds; their gradients for every variable
// against central finite differences of the graph's double-precision reference.
#include "engine/graph/sequence_layers.h"

#include <gtest/gtest.h>

#include <cmath>
#include <functional>

#include "engine/graph/autodiff.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/ops.h"
#include "engine/graph/session.h"
#include "op_check.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;
using graph::f32;
using graph::i32;

using Inputs = std::vector<Tensor>;
using Matrix = std::vector<double>;  // row-major

std::vector<double> doubles(const Array& a) { return {a.data<float>().begin(), a.data<float>().end()}; }

Array random_array(Shape shape, std::uint64_t seed, float low = -1.0f, float high = 1.0f) {
  return Array::from(shape, random_floats(static_cast<std::size_t>(shape.numel()), seed, low, high));
}

double sigmoid(double v) { return 1.0 / (1.0 + std::exp(-v)); }

// row [in] x m [in, out] (rows [first, first + in) of m) -> [out]
std::vector<double> times(const std::vector<double>& row, const Matrix& m, std::int64_t first, std::int64_t out) {
  std::vector<double> y(static_cast<std::size_t>(out), 0.0);
  for (std::size_t k = 0; k < row.size(); ++k)
    for (std::int64_t j = 0; j < out; ++j) y[static_cast<std::size_t>(j)] += row[k] * m[static_cast<std::size_t>((first + static_cast<std::int64_t>(k)) * out + j)];
  return y;
}

void expect_near_all(const std::vector<double>& got, const std::vector<double>& want, double tolerance, const std::string& what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (std::size_t i = 0; i < got.size(); ++i)
    EXPECT_NEAR(got[i], want[i], tolerance * std::max(1.0, std::abs(want[i]))) << what << " [" << i << "]";
}

// d(loss)/d(variable) on the device against central differences of the reference
// interpreter, for every named variable, at up to `samples` elements each.
void check_variable_gradients(Graph& g, Tensor loss, const Feeds& feeds, const std::vector<std::string>& names,
                              double tolerance, int samples = 12) {
  std::vector<Tensor> vars;
  for (const std::string& n : names) vars.push_back(g.find_variable(n));
  const std::vector<Tensor> grads = gradients(loss, vars);
  Session s(g, device());
  const std::vector<Array> device_grads = s.run(feeds, grads);
  std::map<int, RefTensor> ref_feeds;
  for (const auto& [t, a] : feeds) ref_feeds[t.id()] = RefTensor::from(a);
  const RefState initial = RefState::initial(g);
  for (std::size_t v = 0; v < names.size(); ++v) {
    const std::size_t n = initial.variables.at(names[v]).values.size();
    for (int sample = 0; sample < samples; ++sample) {
      const std::size_t i = static_cast<std::size_t>(sample) * 7919 % n;
      const double h = 1e-4;
      auto at = [&](double delta) {
        RefState state = initial;
        state.variables.at(names[v]).values[i] += delta;
        return evaluate_reference(g, ref_feeds, {loss}, {}, state)[0].values[0];
      };
      const double fd = (at(h) - at(-h)) / (2 * h);
      EXPECT_NEAR(device_grads[v].data<float>()[i], fd, tolerance * std::max(1.0, std::abs(fd)))
          << names[v] << "[" << i << "]";
    }
  }
}

TEST(SequenceLayers, LstmCellOp) {
  for (const float forget_bias : {1.0f, 0.0f})
    check_op({.name = "lstm_cell forget_bias " + std::to_string(forget_bias),
              .inputs = {f32({5, 28}), f32({5, 14})},
              .more_inputs = {{f32({3, 4 * 70}), f32({3, 140})}},
              .build = [forget_bias](Inputs& in) { return lstm_cell(in[0], in[1], forget_bias); }});
}

// TensorFlow's LSTMCell, written out: z = [x, h] kernel + bias, gates i, j, f, o.
TEST(SequenceLayers, LstmMatchesTensorFlowsEquations) {
  const std::int64_t batch = 3, time = 5, in = 4, units = 6;
  Graph g(3);
  const Tensor x = placeholder(g, "x", f32({batch, time, in}));
  const Tensor s0 = placeholder(g, "s0", f32({batch, 2 * units}));
  const RnnOutput out = LSTM("lstm", x, units, s0, {.forget_bias = 0.5f});
  Session s(g, device());
  const Array xv = random_array(Shape{batch, time, in}, 1), sv = random_array(Shape{batch, 2 * units}, 2);
  const std::vector<Array> got = s.run({{x, xv}, {s0, sv}}, {out.outputs, out.state});
  const Matrix kernel = doubles(s.variable("lstm/kernel"));
  const std::vector<double> bias = doubles(s.variable("lstm/bias"));
  std::vector<double> outputs, final_state;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<double> c(sv.data<float>().begin() + b * 2 * units, sv.data<float>().begin() + b * 2 * units + units);
    std::vector<double> h(sv.data<float>().begin() + b * 2 * units + units, sv.data<float>().begin() + (b + 1) * 2 * units);
    std::vector<std::vector<double>> hs;
    for (std::int64_t t = 0; t < time; ++t) {
      std::vector<double> xt(xv.data<float>().begin() + (b * time + t) * in, xv.data<float>().begin() + (b * time + t + 1) * in);
      std::vector<double> z = times(xt, kernel, 0, 4 * units);
      const std::vector<double> zh = times(h, kernel, in, 4 * units);
      for (std::int64_t k = 0; k < 4 * units; ++k) z[static_cast<std::size_t>(k)] += zh[static_cast<std::size_t>(k)] + bias[static_cast<std::size_t>(k)];
      for (std::int64_t u = 0; u < units; ++u) {
        const auto gate = [&](int q) { return z[static_cast<std::size_t>(q * units + u)]; };
        c[static_cast<std::size_t>(u)] = sigmoid(gate(2) + 0.5) * c[static_cast<std::size_t>(u)] + sigmoid(gate(0)) * std::tanh(gate(1));
        h[static_cast<std::size_t>(u)] = sigmoid(gate(3)) * std::tanh(c[static_cast<std::size_t>(u)]);
      }
      outputs.insert(outputs.end(), h.begin(), h.end());
    }
    final_state.insert(final_state.end(), c.begin(), c.end());
    final_state.insert(final_state.end(), h.begin(), h.end());
  }
  expect_near_all(doubles(got[0]), outputs, 2e-5, "outputs");
  expect_near_all(doubles(got[1]), final_state, 2e-5, "final state");
  EXPECT_EQ(got[0].shape().dims(), (std::vector<std::int64_t>{batch, time, units}));
}

// TensorFlow's GRUCell: r, u = sigmoid([x, h] Wg + bg); c = tanh([x, r h] Wc + bc);
// h' = u h + (1 - u) c.
TEST(SequenceLayers, GruMatchesTensorFlowsEquations) {
  const std::int64_t batch = 2, time = 4, in = 3, units = 5;
  Graph g(4);
  const Tensor x = placeholder(g, "x", f32({batch, time, in}));
  const Tensor h0 = placeholder(g, "h0", f32({batch, units}));
  const RnnOutput out = GRU("gru", x, units, h0);
  Session s(g, device());
  const Array xv = random_array(Shape{batch, time, in}, 3), hv = random_array(Shape{batch, units}, 4);
  const std::vector<Array> got = s.run({{x, xv}, {h0, hv}}, {out.outputs, out.state});
  const Matrix wg = doubles(s.variable("gru/gates/kernel")), wc = doubles(s.variable("gru/candidate/kernel"));
  const std::vector<double> bg = doubles(s.variable("gru/gates/bias")), bc = doubles(s.variable("gru/candidate/bias"));
  EXPECT_EQ(bg[0], 1.0);  // TensorFlow's gate bias starts at 1
  std::vector<double> outputs, final_state;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<double> h(hv.data<float>().begin() + b * units, hv.data<float>().begin() + (b + 1) * units);
    for (std::int64_t t = 0; t < time; ++t) {
      std::vector<double> xt(xv.data<float>().begin() + (b * time + t) * in, xv.data<float>().begin() + (b * time + t + 1) * in);
      std::vector<double> gates = times(xt, wg, 0, 2 * units);
      const std::vector<double> gh = times(h, wg, in, 2 * units);
      for (std::int64_t k = 0; k < 2 * units; ++k)
        gates[static_cast<std::size_t>(k)] = sigmoid(gates[static_cast<std::size_t>(k)] + gh[static_cast<std::size_t>(k)] + bg[static_cast<std::size_t>(k)]);
      std::vector<double> rh(static_cast<std::size_t>(units));
      for (std::int64_t u = 0; u < units; ++u) rh[static_cast<std::size_t>(u)] = gates[static_cast<std::size_t>(u)] * h[static_cast<std::size_t>(u)];
      std::vector<double> cand = times(xt, wc, 0, units);
      const std::vector<double> ch = times(rh, wc, in, units);
      for (std::int64_t u = 0; u < units; ++u) {
        const auto k = static_cast<std::size_t>(u);
        const double c = std::tanh(cand[k] + ch[k] + bc[k]), update = gates[static_cast<std::size_t>(units + u)];
        h[k] = update * h[k] + (1 - update) * c;
      }
      outputs.insert(outputs.end(), h.begin(), h.end());
    }
    final_state.insert(final_state.end(), h.begin(), h.end());
  }
  expect_near_all(doubles(got[0]), outputs, 2e-5, "outputs");
  expect_near_all(doubles(got[1]), final_state, 2e-5, "final state");
}

// Causal multi-head attention written out per head: softmax over j <= t of q_t k_j / sqrt(d).
TEST(SequenceLayers, CausalSelfAttentionMatchesTheEquations) {
  const std::int64_t batch = 2, time = 5, c = 6, heads = 3, d = 2;
  Graph g(5);
  const Tensor x = placeholder(g, "x", f32({batch, time, c}));
  const Tensor y = CausalSelfAttention("attn", x, heads);
  Session s(g, device());
  const Array xv = random_array(Shape{batch, time, c}, 5);
  const std::vector<double> got = doubles(s.run({{x, xv}}, {y})[0]);
  const Matrix wqkv = doubles(s.variable("attn/qkv/W")), wproj = doubles(s.variable("attn/proj/W"));
  const std::vector<double> bqkv = doubles(s.variable("attn/qkv/b")), bproj = doubles(s.variable("attn/proj/b"));
  std::vector<double> want;
  for (std::int64_t b = 0; b < batch; ++b) {
    std::vector<std::vector<double>> qkv;
    for (std::int64_t t = 0; t < time; ++t) {
      std::vector<double> xt(xv.data<float>().begin() + (b * time + t) * c, xv.data<float>().begin() + (b * time + t + 1) * c);
      std::vector<double> r = times(xt, wqkv, 0, 3 * c);
      for (std::int64_t k = 0; k < 3 * c; ++k) r[static_cast<std::size_t>(k)] += bqkv[static_cast<std::size_t>(k)];
      qkv.push_back(r);
    }
    for (std::int64_t t = 0; t < time; ++t) {
      std::vector<double> merged(static_cast<std::size_t>(c), 0.0);
      for (std::int64_t hd = 0; hd < heads; ++hd) {
        const auto q = [&](std::int64_t pos, std::int64_t part, std::int64_t i) { return qkv[static_cast<std::size_t>(pos)][static_cast<std::size_t>(part * c + hd * d + i)]; };
        std::vector<double> w;
        double top = -1e300, sum = 0;
        for (std::int64_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (std::int64_t i = 0; i < d; ++i) dot += q(t, 0, i) * q(j, 1, i);
          w.push_back(dot / std::sqrt(double(d)));
          top = std::max(top, w.back());
        }
        for (double& v : w) sum += (v = std::exp(v - top));
        for (std::int64_t j = 0; j <= t; ++j)
          for (std::int64_t i = 0; i < d; ++i) merged[static_cast<std::size_t>(hd * d + i)] += w[static_cast<std::size_t>(j)] / sum * q(j, 2, i);
      }
      std::vector<double> out = times(merged, wproj, 0, c);
      for (std::int64_t k = 0; k < c; ++k) want.push_back(out[static_cast<std::size_t>(k)] + bproj[static_cast<std::size_t>(k)]);
    }
  }
  expect_near_all(got, want, 2e-5, "attention");
}

TEST(SequenceLayers, EmbeddingLayerNormGroupNormNamesAndValues) {
  Graph g(6);
  const Tensor ids = placeholder(g, "ids", i32({2, 3}));
  const Tensor e = Embedding("embed", ids, 7, 4);
  const Tensor ln = LayerNorm("ln", e);
  const Tensor img = placeholder(g, "img", f32({2, 3, 3, 4}));
  const Tensor gn = GroupNorm("gn", img, 2);
  for (const char* name : {"embed/embeddings", "ln/gamma", "ln/beta", "gn/gamma", "gn/beta"})
    EXPECT_TRUE(g.find_variable(name).valid()) << name;
  Session s(g, device());
  Array idv(DType::i32, Shape{2, 3});
  const std::vector<std::int32_t> id = {0, 6, 2, 2, 5, 1};
  std::copy(id.begin(), id.end(), idv.data<std::int32_t>().begin());
  const Array imv = random_array(Shape{2, 3, 3, 4}, 9);
  const std::vector<Array> got = s.run({{ids, idv}, {img, imv}}, {e, ln, gn});
  const std::vector<double> table = doubles(s.variable("embed/embeddings"));
  for (std::size_t k = 0; k < id.size(); ++k)
    for (std::size_t j = 0; j < 4; ++j) EXPECT_EQ(got[0].data<float>()[k * 4 + j], table[static_cast<std::size_t>(id[k]) * 4 + j]);
  // Each row of the layer-normed embedding has mean 0 and variance var / (var + eps).
  for (std::size_t k = 0; k < id.size(); ++k) {
    double mean = 0;
    for (std::size_t j = 0; j < 4; ++j) mean += got[1].data<float>()[k * 4 + j] / 4.0;
    EXPECT_NEAR(mean, 0.0, 1e-6);
  }
  // GroupNorm: each image's group of 2 channels over 3 x 3 normalised.
  for (int b = 0; b < 2; ++b)
    for (int group = 0; group < 2; ++group) {
      double sum = 0, squares = 0, xs = 0, xsq = 0;
      for (int p = 0; p < 9; ++p)
        for (int ch = group * 2; ch < group * 2 + 2; ++ch) {
          const std::size_t at = static_cast<std::size_t>((b * 9 + p) * 4 + ch);
          sum += got[2].data<float>()[at];
          squares += double(got[2].data<float>()[at]) * got[2].data<float>()[at];
          xs += imv.data<float>()[at];
          xsq += double(imv.data<float>()[at]) * imv.data<float>()[at];
        }
      const double var = xsq / 18 - (xs / 18) * (xs / 18);
      EXPECT_NEAR(sum / 18, 0.0, 1e-6);
      EXPECT_NEAR(squares / 18, var / (var + 1e-5), 1e-5);
    }
}

// Every variable's gradient through the unrolled layers, with the final state in the loss.
TEST(SequenceLayers, GradientsForEveryVariableMatchFiniteDifferences) {
  {
    Graph g(7);
    const Tensor x = placeholder(g, "x", f32({2, 3, 3}));
    const Tensor s0 = placeholder(g, "s0", f32({2, 8}));
    const RnnOutput out = LSTM("lstm", x, 4, s0);
    const Tensor w = constant(g, random_array(Shape{2, 3, 4}, 11), "w");
    const Tensor loss = reduce_sum(out.outputs * w) + reduce_sum(square(out.state));
    check_variable_gradients(g, loss, {{x, random_array(Shape{2, 3, 3}, 12)}, {s0, random_array(Shape{2, 8}, 13)}},
                             {"lstm/kernel", "lstm/bias"}, 2e-4);
  }
  {
    Graph g(8);
    const Tensor x = placeholder(g, "x", f32({2, 3, 3}));
    const Tensor h0 = placeholder(g, "h0", f32({2, 4}));
    const RnnOutput out = GRU("gru", x, 4, h0);
    const Tensor loss = reduce_sum(out.outputs * constant(g, random_array(Shape{2, 3, 4}, 14), "w")) +
                        reduce_sum(square(out.state));
    check_variable_gradients(g, loss, {{x, random_array(Shape{2, 3, 3}, 15)}, {h0, random_array(Shape{2, 4}, 16)}},
                             {"gru/gates/kernel", "gru/gates/bias", "gru/candidate/kernel", "gru/candidate/bias"}, 2e-4);
  }
  {
    Graph g(9);
    const Tensor ids = placeholder(g, "ids", i32({2, 4}));
    const Tensor h = TransformerBlock("block", Embedding("embed", ids, 5, 8, uniform(-1.0f, 1.0f)), 2, 2);
    const Tensor loss = reduce_sum(h * constant(g, random_array(Shape{2, 4, 8}, 17), "w"));
    Array idv(DType::i32, Shape{2, 4});
    const std::vector<std::int32_t> id = {0, 3, 3, 1, 4, 2, 0, 3};
    std::copy(id.begin(), id.end(), idv.data<std::int32_t>().begin());
    check_variable_gradients(g, loss, {{ids, idv}},
                             {"embed/embeddings", "block/ln1/gamma", "block/ln1/beta", "block/attn/qkv/W",
                              "block/attn/qkv/b", "block/attn/proj/W", "block/ln2/gamma", "block/fc1/W", "block/fc1/b",
                              "block/fc2/W", "block/fc2/b"},
                             3e-4);
  }
}

// Changing a later position never changes an earlier output.
TEST(SequenceLayers, AttentionIsCausal) {
  Graph g(10);
  const Tensor x = placeholder(g, "x", f32({1, 6, 4}));
  const Tensor y = TransformerBlock("block", x, 2);
  Session s(g, device());
  Array a = random_array(Shape{1, 6, 4}, 20);
  const std::vector<double> before = doubles(s.run({{x, a}}, {y})[0]);
  for (int i = 16; i < 24; ++i) a.data<float>()[static_cast<std::size_t>(i)] += 3.0f;  // position 4 onwards
  const std::vector<double> after = doubles(s.run({{x, a}}, {y})[0]);
  for (int i = 0; i < 24; ++i) {
    if (i < 16)
      EXPECT_EQ(before[static_cast<std::size_t>(i)], after[static_cast<std::size_t>(i)]) << i;
    else
      EXPECT_NE(before[static_cast<std::size_t>(i)], after[static_cast<std::size_t>(i)]) << i;
  }
}

}  // namespace
}  // namespace vkp::test
