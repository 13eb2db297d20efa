// Layers of sequence models, named as TensorFlow / tensorpack name them so that a
// checkpoint from another framework maps variable for variable:
//   Embedding("embed", ...)        embed/embeddings [vocab, dim]
//   LayerNorm("ln", ...)           ln/gamma [C], ln/beta [C]
//   GroupNorm("gn", ...)           gn/gamma [C], gn/beta [C]
//   LSTM("lstm", ...)              lstm/kernel [in + units, 4 units], lstm/bias [4 units]
//                                  (TensorFlow's LSTMCell: rows of x then of h, gate
//                                  columns i, j, f, o)
//   GRU("gru", ...)                gru/gates/kernel [in + units, 2 units] (r, u),
//                                  gru/gates/bias (starts at 1), gru/candidate/kernel
//                                  [in + units, units], gru/candidate/bias (TensorFlow's GRUCell)
//   CausalSelfAttention("attn", ...) attn/qkv/W [C, 3C] (q, k, v columns, heads
//                                  contiguous within each), attn/qkv/b, attn/proj/W, attn/proj/b
//   TransformerBlock("block", ...) block/ln1, block/attn, block/ln2, block/fc1, block/fc2
// Recurrent layers unroll over the static sequence length into one graph (one program,
// no per-step submission), take the initial state as an input and return the final
// state, so that state is carried from batch to batch (tensorpack's PTB example) or fed
// back step by step (sampling).
#pragma once

#include <cstdint>
#include <string>

#include "engine/graph/graph.h"
#include "engine/graph/initializer.h"

namespace vkp::graph {

// ids i32 [..] -> f32 [.., dim]; an id outside [0, vocab) is an Error when fed (gather).
Tensor Embedding(const std::string& name, Tensor ids, std::int64_t vocab, std::int64_t dim,
                 Initializer init = uniform(-0.05f, 0.05f));

// Over the last axis: layer_norm(x) * gamma + beta (tensorpack's LayerNorm).
Tensor LayerNorm(const std::string& name, Tensor x, float epsilon = 1e-5f, bool scale = true, bool center = true);

// x NHWC normalised per image over H, W and the channels of each of `groups` groups
// (Wu and He), then gamma and beta per channel (tensorpack's GroupNorm).
Tensor GroupNorm(const std::string& name, Tensor x, std::int64_t groups = 32, float epsilon = 1e-5f);

struct RnnOptions {
  float forget_bias = 1.0f;  // LSTM only; tensorpack's PTB example uses 0
  Initializer kernel_initializer = glorot_uniform();
  bool trainable = true;
};

struct RnnOutput {
  Tensor outputs;  // [batch, time, units]: h at every step
  Tensor state;    // the final state, shaped like the initial one
};

// x [batch, time, in] with a known time and in; initial_state [batch, 2 units] = (c, h).
RnnOutput LSTM(const std::string& name, Tensor x, std::int64_t units, Tensor initial_state,
               const RnnOptions& options = {});
// initial_state [batch, units] = h.
RnnOutput GRU(const std::string& name, Tensor x, std::int64_t units, Tensor initial_state,
              const RnnOptions& options = {});

// Multi-head causal self-attention on x [batch, time, C] (known time and C, C divisible
// by heads): position t attends to positions <= t. Scaled dot products, softmax, output
// projection.
Tensor CausalSelfAttention(const std::string& name, Tensor x, std::int64_t heads);

// A pre-norm transformer block: x + attn(LayerNorm(x)), then + MLP(LayerNorm(.)) with a
// GELU hidden layer of mlp_ratio * C units.
Tensor TransformerBlock(const std::string& name, Tensor x, std::int64_t heads, std::int64_t mlp_ratio = 4);

}  // namespace vkp::graph
