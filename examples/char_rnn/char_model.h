// The character-level language model of examples/char_rnn: an embedding, an LSTM, a GRU
// or a stack of transformer blocks, and a linear layer to the next character's logits,
// over the byte vocabulary of a CharCorpus (Debian's fortunes by default).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "vkpack/vkpack.h"

namespace vkp::examples {

enum class CharModelKind { lstm, gru, transformer };
CharModelKind parse_char_model(const std::string& name);  // Error naming the choices
const char* to_string(CharModelKind kind);

struct CharModelConfig {
  CharModelKind kind = CharModelKind::lstm;
  std::int64_t vocab = 0, length = 64, batch = 32;
  std::int64_t hidden = 128;  // LSTM / GRU units, or the transformer's width
  int layers = 1;             // recurrent layers, or transformer blocks
  std::int64_t heads = 4;     // transformer
  float forget_bias = 1.0f;   // LSTM
  float learning_rate = 2e-3f;
  float clip_norm = 5.0f;  // GlobalNormClip of the gradients, as tensorpack's Char-RNN; 0: none

  // The recurrent state of every layer side by side: [batch, state_width()] (an LSTM
  // layer's (c, h), a GRU layer's h); 0 for the transformer, which has none.
  std::int64_t state_width() const;
};

// Training and evaluation tower. Inputs "x" and "y", i32 [batch, length] (y is x one
// character on), every sequence from a zero state. Names "cost" (the mean cross entropy
// in nats), "bpc" (the same in bits per character) and "logits" [batch * length, vocab];
// Adam with the session's learning rate, its gradients clipped to global norm clip_norm.
class CharModel : public train::ModelDesc {
 public:
  explicit CharModel(CharModelConfig config);
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
  graph::Optimizer optimizer(graph::Graph& graph) override;

 protected:
  CharModelConfig config_;
};

// The sampling tower, with the training tower's variables. Recurrent models take one
// character "x" i32 [1, 1] and "state" f32 [1, state_width()] and give "logits" [1, vocab]
// and "next_state"; the transformer takes a window "x" i32 [1, length] and gives
// "logits" [1, length, vocab] (position t sees characters 0..t only).
class CharSampler : public CharModel {
 public:
  explicit CharSampler(CharModelConfig config);
  std::vector<train::InputSpec> inputs() const override;
  graph::Tensor build_graph(const std::vector<graph::Tensor>& inputs) override;
};

// Batches of CharSequenceData over one part of the corpus: shuffled from `seed` for
// training, in order for validation; partial batches dropped.
dataflow::DataFlowPtr char_batches(std::shared_ptr<const dataflow::CharCorpus> corpus, bool train,
                                   const CharModelConfig& config, std::uint64_t seed);

}  // namespace vkp::examples
