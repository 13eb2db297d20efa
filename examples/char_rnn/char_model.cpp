#include "char_model.h"

#include <cmath>

namespace vkp::examples {

using namespace vkp::graph;

CharModelKind parse_char_model(const std::string& name) {
  if (name == "lstm") return CharModelKind::lstm;
  if (name == "gru") return CharModelKind::gru;
  if (name == "transformer") return CharModelKind::transformer;
  throw Error(ErrorCode::invalid_argument, "--model must be lstm, gru or transformer, not '" + name + "'");
}

const char* to_string(CharModelKind kind) {
  switch (kind) {
    case CharModelKind::lstm: return "lstm";
    case CharModelKind::gru: return "gru";
    case CharModelKind::transformer: return "transformer";
  }
  return "?";
}

std::int64_t CharModelConfig::state_width() const {
  switch (kind) {
    case CharModelKind::lstm: return 2 * hidden * layers;
    case CharModelKind::gru: return hidden * layers;
    case CharModelKind::transformer: return 0;
  }
  return 0;
}

namespace {

// Embedding, then the recurrent layers from `state` (each layer's slice of it) or the
// transformer blocks; returns the hidden sequence [batch, time, hidden] and, for
// recurrent models, the final states side by side.
std::pair<Tensor, Tensor> body(const CharModelConfig& c, Tensor x, Tensor state) {
  const std::int64_t time = x.dims()[1];
  Tensor h = Embedding("embed", x, c.vocab, c.hidden, uniform(-0.1f, 0.1f));
  if (c.kind == CharModelKind::transformer) {
    Graph& g = x.graph();
    const Tensor positions = get_variable(g, "pos/embeddings", {time, c.hidden}, normal(0.02f));
    h = h + reshape(positions, {1, time, c.hidden});
    for (int l = 0; l < c.layers; ++l) h = TransformerBlock("block" + std::to_string(l), h, c.heads);
    return {LayerNorm("ln_final", h), Tensor()};
  }
  const std::int64_t width = c.state_width() / c.layers;
  std::vector<Tensor> finals;
  for (int l = 0; l < c.layers; ++l) {
    const Tensor initial = slice(state, {0, l * width}, {-1, width});
    const std::string name = std::string(to_string(c.kind)) + std::to_string(l);
    const RnnOutput out = c.kind == CharModelKind::lstm ? LSTM(name, h, c.hidden, initial, {.forget_bias = c.forget_bias})
                                                        : GRU(name, h, c.hidden, initial);
    h = out.outputs;
    finals.push_back(out.state);
  }
  return {h, concat(finals, 1)};
}

Tensor to_logits(const CharModelConfig& c, Tensor h) {
  return FullyConnected("fc", reshape(h, {-1, c.hidden}), c.vocab, {.kernel_initializer = glorot_uniform()});
}

}  // namespace

CharModel::CharModel(CharModelConfig config) : config_(config) {
  if (config_.vocab < 2 || config_.length < 1 || config_.batch < 1 || config_.hidden < 1 || config_.layers < 1)
    throw Error(ErrorCode::invalid_argument, "CharModel: vocab >= 2, and length, batch, hidden, layers >= 1");
  if (config_.kind == CharModelKind::transformer && config_.hidden % config_.heads != 0)
    throw Error(ErrorCode::invalid_argument, "--hidden " + std::to_string(config_.hidden) + " does not divide into " +
                                                 std::to_string(config_.heads) + " heads");
}

std::vector<train::InputSpec> CharModel::inputs() const {
  return {{"x", i32({config_.batch, config_.length})}, {"y", i32({config_.batch, config_.length})}};
}

Tensor CharModel::build_graph(const std::vector<Tensor>& in) {
  Graph& g = in[0].graph();
  Tensor zeros_state;
  if (config_.state_width() > 0)
    zeros_state = constant(g, Array(DType::f32, Shape{config_.batch, config_.state_width()}), "initial_state");
  const Tensor h = body(config_, in[0], zeros_state).first;
  const Tensor logits = identity(to_logits(config_, h), "logits");
  const Tensor cost = identity(reduce_mean(sparse_softmax_cross_entropy(logits, reshape(in[1], {-1}))), "cost");
  const Tensor bpc = identity(cost * static_cast<float>(1.0 / std::log(2.0)), "bpc");
  callbacks::add_moving_summary({cost, bpc});
  return cost;
}

Optimizer CharModel::optimizer(Graph& graph) {
  const Optimizer base = adam(graph, config_.learning_rate);
  if (config_.clip_norm == 0.0f) return base;
  return apply_grad_processors(base, {std::make_shared<GlobalNormClip>(config_.clip_norm)});
}

CharSampler::CharSampler(CharModelConfig config) : CharModel(config) {}

std::vector<train::InputSpec> CharSampler::inputs() const {
  if (config_.kind == CharModelKind::transformer) return {{"x", i32({1, config_.length})}};
  return {{"x", i32({1, 1})}, {"state", f32({1, config_.state_width()})}};
}

Tensor CharSampler::build_graph(const std::vector<Tensor>& in) {
  const auto [h, final_state] = body(config_, in[0], in.size() > 1 ? in[1] : Tensor());
  const Tensor logits = to_logits(config_, h);
  identity(reshape(logits, config_.kind == CharModelKind::transformer ? std::vector<std::int64_t>{1, config_.length, config_.vocab}
                                                                      : std::vector<std::int64_t>{1, config_.vocab}),
           "logits");
  if (final_state.valid()) identity(final_state, "next_state");
  return reduce_sum(logits);  // not trained: the sampler only predicts
}

dataflow::DataFlowPtr char_batches(std::shared_ptr<const dataflow::CharCorpus> corpus, bool train,
                                   const CharModelConfig& config, std::uint64_t seed) {
  using namespace vkp::dataflow;
  const std::vector<std::int32_t>& part = train ? corpus->train : corpus->validation;
  auto sequences = std::make_unique<CharSequenceData>(corpus, part,
                                                      SequenceOptions{.length = config.length, .shuffle = train, .seed = seed});
  return std::make_unique<BatchData>(std::move(sequences), static_cast<std::size_t>(config.batch), false);
}

}  // namespace vkp::examples
