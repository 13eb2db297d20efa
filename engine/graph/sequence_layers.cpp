#include "engine/graph/sequence_layers.h"

#include <cmath>
#include <limits>
#include <optional>

#include "core/error.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"

namespace vkp::graph {
namespace {

[[noreturn]] void fail(const std::string& layer, const std::string& message) {
  throw Error(ErrorCode::invalid_argument, layer + ": " + message);
}

std::int64_t last_dim(Tensor x, const std::string& layer) {
  if (x.rank() < 1 || x.dims().back() < 0) fail(layer, "input " + to_string(x.type()) + " needs a known last axis");
  return x.dims().back();
}

// x [batch, time, in]: checks and returns (time, in).
std::pair<std::int64_t, std::int64_t> sequence_dims(Tensor x, const std::string& layer) {
  if (x.rank() != 3 || x.dims()[1] < 1 || x.dims()[2] < 1)
    fail(layer, "input must be [batch, time, features] with known time and features, got " + to_string(x.type()));
  return {x.dims()[1], x.dims()[2]};
}

void check_state(Tensor state, std::int64_t width, const std::string& layer) {
  if (state.rank() != 2 || state.dims()[1] != width)
    fail(layer, "the initial state must be [batch, " + std::to_string(width) + "], got " + to_string(state.type()));
}

// Columns [begin, begin + count) of a [rows, cols] matrix.
Tensor columns(Tensor m, std::int64_t begin, std::int64_t count) { return slice(m, {0, begin}, {-1, count}); }
Tensor rows(Tensor m, std::int64_t begin, std::int64_t count) { return slice(m, {begin, 0}, {count, -1}); }

// x [batch, time, in] times w plus b, for every step in one matmul, time-major:
// [time, batch, n]. The steps slice this one tensor, so that autodiff assembles its
// gradient as one concat of the steps' gradients (autodiff.cpp).
Tensor project_inputs(Tensor x, Tensor w, Tensor b) {
  const Tensor time_major = transpose(x, {1, 0, 2});
  const Tensor projected = bias_add(matmul(reshape(time_major, {-1, x.dims()[2]}), w), b);
  return reshape(projected, {x.dims()[1], -1, w.dims()[1]});
}

// Step t of project_inputs' result, [batch, n].
Tensor step_rows(Tensor projected, std::int64_t t) {
  return reshape(slice(projected, {t, 0, 0}, {1, -1, -1}), {-1, projected.dims()[2]});
}

}  // namespace

Tensor Embedding(const std::string& name, Tensor ids, std::int64_t vocab, std::int64_t dim, Initializer init) {
  if (vocab < 1 || dim < 1) fail(name, "vocab and dim must be positive");
  Graph& g = ids.graph();
  VariableScope scope(g, name);
  return identity(gather(get_variable(g, "embeddings", {vocab, dim}, init), ids), "output");
}

Tensor LayerNorm(const std::string& name, Tensor x, float epsilon, bool scale, bool center) {
  Graph& g = x.graph();
  VariableScope scope(g, name);
  const std::int64_t c = last_dim(x, name);
  Tensor y = layer_norm(x, epsilon);
  if (scale) y = y * get_variable(g, "gamma", {c}, ones());
  if (center) y = bias_add(y, get_variable(g, "beta", {c}, zeros()));
  return identity(y, "output");
}

Tensor GroupNorm(const std::string& name, Tensor x, std::int64_t groups, float epsilon) {
  Graph& g = x.graph();
  if (x.rank() != 4 || x.dims()[1] < 0 || x.dims()[2] < 0 || x.dims()[3] < 0)
    fail(name, "GroupNorm takes NHWC images with known H, W, C, not " + to_string(x.type()));
  const std::int64_t h = x.dims()[1], w = x.dims()[2], c = x.dims()[3];
  if (groups < 1 || c % groups != 0)
    fail(name, std::to_string(c) + " channels do not divide into " + std::to_string(groups) + " groups");
  VariableScope scope(g, name);
  const Tensor grouped = reshape(x, {-1, h, w, groups, c / groups});
  const Tensor centred = grouped - reduce_mean(grouped, {1, 2, 4}, true);
  const Tensor variance = reduce_mean(square(centred), {1, 2, 4}, true);
  Tensor y = reshape(centred * rsqrt(variance + epsilon), {-1, h, w, c});
  y = y * get_variable(g, "gamma", {c}, ones());
  return identity(bias_add(y, get_variable(g, "beta", {c}, zeros())), "output");
}

RnnOutput LSTM(const std::string& name, Tensor x, std::int64_t units, Tensor initial_state, const RnnOptions& o) {
  const auto [time, in] = sequence_dims(x, name);
  check_state(initial_state, 2 * units, name);
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  const Tensor kernel = get_variable(g, "kernel", {in + units, 4 * units}, o.kernel_initializer);
  const Tensor bias = get_variable(g, "bias", {4 * units}, zeros());
  const Tensor projected = project_inputs(x, rows(kernel, 0, in), bias);
  const Tensor recurrent = rows(kernel, in, units);
  Tensor state = initial_state, h = columns(initial_state, units, units);
  std::vector<Tensor> hs;
  for (std::int64_t t = 0; t < time; ++t) {
    state = lstm_cell(add(step_rows(projected, t), matmul(h, recurrent)), state, o.forget_bias);
    h = columns(state, units, units);  // read by the next step and the output alike: one slice
    hs.push_back(h);
  }
  return {identity(stack(hs, 1), "output"), identity(state, "state")};
}

RnnOutput GRU(const std::string& name, Tensor x, std::int64_t units, Tensor initial_state, const RnnOptions& o) {
  const auto [time, in] = sequence_dims(x, name);
  check_state(initial_state, units, name);
  Graph& g = x.graph();
  VariableScope scope(g, name);
  std::optional<FreezeVariables> frozen;
  if (!o.trainable) frozen.emplace(g);
  Tensor gate_kernel, gate_bias, candidate_kernel, candidate_bias;
  {
    VariableScope gates(g, "gates");
    gate_kernel = get_variable(g, "kernel", {in + units, 2 * units}, o.kernel_initializer);
    gate_bias = get_variable(g, "bias", {2 * units}, ones());
  }
  {
    VariableScope candidate(g, "candidate");
    candidate_kernel = get_variable(g, "kernel", {in + units, units}, o.kernel_initializer);
    candidate_bias = get_variable(g, "bias", {units}, zeros());
  }
  const Tensor gate_inputs = project_inputs(x, rows(gate_kernel, 0, in), gate_bias);
  const Tensor candidate_inputs = project_inputs(x, rows(candidate_kernel, 0, in), candidate_bias);
  const Tensor gate_recurrent = rows(gate_kernel, in, units), candidate_recurrent = rows(candidate_kernel, in, units);
  Tensor h = initial_state;
  std::vector<Tensor> hs;
  for (std::int64_t t = 0; t < time; ++t) {
    const Tensor gates = sigmoid(add(step_rows(gate_inputs, t), matmul(h, gate_recurrent)));
    const Tensor r = columns(gates, 0, units), u = columns(gates, units, units);
    const Tensor c = graph::tanh(add(step_rows(candidate_inputs, t), matmul(r * h, candidate_recurrent)));
    h = c + u * (h - c);  // u h + (1 - u) c
    hs.push_back(h);
  }
  return {identity(stack(hs, 1), "output"), identity(h, "state")};
}

Tensor CausalSelfAttention(const std::string& name, Tensor x, std::int64_t heads) {
  const auto [time, c] = sequence_dims(x, name);
  if (heads < 1 || c % heads != 0) fail(name, std::to_string(c) + " channels do not divide into " + std::to_string(heads) + " heads");
  Graph& g = x.graph();
  VariableScope scope(g, name);
  const std::int64_t d = c / heads;
  const FullyConnectedOptions linear{.kernel_initializer = glorot_uniform()};
  const Tensor qkv = FullyConnected("qkv", reshape(x, {-1, c}), 3 * c, linear);
  // [batch, time, 3, heads, d] -> [3, batch, heads, time, d]
  const Tensor split_heads = transpose(reshape(qkv, {-1, time, 3, heads, d}), {2, 0, 3, 1, 4});
  const std::vector<Tensor> parts = unstack(split_heads, 0);
  const Tensor scores = matmul(parts[0], parts[1], /*transpose_a=*/false, /*transpose_b=*/true) *
                        static_cast<float>(1.0 / std::sqrt(double(d)));
  const Tensor masked = graph::where(causal_mask(g, time), scores, scalar(g, -std::numeric_limits<float>::infinity()));
  const Tensor attended = matmul(softmax(masked), parts[2]);  // [batch, heads, time, d]
  const Tensor merged = reshape(transpose(attended, {0, 2, 1, 3}), {-1, c});
  return identity(reshape(FullyConnected("proj", merged, c, linear), {-1, time, c}), "output");
}

Tensor TransformerBlock(const std::string& name, Tensor x, std::int64_t heads, std::int64_t mlp_ratio) {
  const auto [time, c] = sequence_dims(x, name);
  Graph& g = x.graph();
  VariableScope scope(g, name);
  const Tensor attended = x + CausalSelfAttention("attn", LayerNorm("ln1", x), heads);
  const Tensor normed = reshape(LayerNorm("ln2", attended), {-1, c});
  const FullyConnectedOptions hidden{.activation = [](Tensor t) { return gelu(t); },
                                     .kernel_initializer = glorot_uniform()};
  const Tensor mlp = FullyConnected("fc2", FullyConnected("fc1", normed, mlp_ratio * c, hidden), c,
                                    {.kernel_initializer = glorot_uniform()});
  return identity(attended + reshape(mlp, {-1, time, c}), "output");
}

}  // namespace vkp::graph
