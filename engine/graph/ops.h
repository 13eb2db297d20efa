// The op library: functions that add nodes to the graph of their inputs. Shapes are
// checked as each node is built; the first dimension may be unknown until compile.
// Layouts: images are NHWC, convolution filters HWIO ([KH, KW, Cin / groups, Cout]).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"

namespace vkp::graph {

// --- sources ---
// A value fed at run time; extents may be kUnknown (compile needs them then).
Tensor placeholder(Graph& graph, const std::string& name, TensorType type);
Tensor constant(Graph& graph, Array value, const std::string& name = {});
Tensor scalar(Graph& graph, float value);

// --- elementwise (f32) ---
Tensor relu(Tensor x);
Tensor leaky_relu(Tensor x, float alpha = 0.2f);
Tensor elu(Tensor x, float alpha = 1.0f);
// x Phi(x), Phi the standard normal distribution (the exact GELU, not the tanh form).
Tensor gelu(Tensor x);
Tensor sigmoid(Tensor x);
Tensor tanh(Tensor x);
Tensor exp(Tensor x);
Tensor log(Tensor x);
Tensor sqrt(Tensor x);
Tensor rsqrt(Tensor x);
Tensor neg(Tensor x);
Tensor abs(Tensor x);
Tensor square(Tensor x);
// No gradient, unless straight_through: then dy passes unchanged (the straight-through
// estimator of quantization-aware training). round: halves to even, as TensorFlow's.
Tensor floor(Tensor x, bool straight_through = false);
Tensor round(Tensor x, bool straight_through = false);
// numpy broadcasting.
Tensor add(Tensor a, Tensor b);
Tensor sub(Tensor a, Tensor b);
Tensor mul(Tensor a, Tensor b);
Tensor div(Tensor a, Tensor b);
Tensor maximum(Tensor a, Tensor b);
Tensor minimum(Tensor a, Tensor b);
Tensor pow(Tensor a, Tensor b);
Tensor operator+(Tensor a, Tensor b);
Tensor operator-(Tensor a, Tensor b);
Tensor operator*(Tensor a, Tensor b);
Tensor operator/(Tensor a, Tensor b);
Tensor operator*(Tensor a, float s);
Tensor operator*(float s, Tensor a);
Tensor operator+(Tensor a, float s);
Tensor operator-(Tensor a);
// a where condition != 0, else b; the three broadcast (numpy). A selection, not a blend:
// exact for any values of a and b, infinities included (an attention mask's -inf).
// Gradients flow to a and b where each was chosen; condition gets none.
Tensor where(Tensor condition, Tensor a, Tensor b);
// min(max(x, low), high); the gradient is dy inside [low, high], 0 outside.
Tensor clip_by_value(Tensor x, float low, float high);
// x [..., C] + b [C].
Tensor bias_add(Tensor x, Tensor b);

// --- linear algebra ---
// [.., M, K] x [.., K, N]; batch dims broadcast (numpy), or one operand rank 2 (shared).
Tensor matmul(Tensor a, Tensor b, bool transpose_a = false, bool transpose_b = false);

// --- reductions ---
// Over `axes` (negative count from the end); empty: every axis. The axes must be
// adjacent after sorting, or the reduction is split into several.
Tensor reduce_sum(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
Tensor reduce_mean(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
Tensor reduce_max(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
Tensor reduce_min(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
// The number of elements of x that are inf or NaN, as a float scalar (no gradient).
Tensor count_nonfinite(Tensor x);
Tensor argmax(Tensor x, int axis = -1);  // i32
// sum(x^2) / 2
Tensor l2_loss(Tensor x);
// sqrt(mean(x^2)) over every element, a scalar (tensorpack's rms).
Tensor rms(Tensor x);

// --- shapes ---
Tensor reshape(Tensor x, std::vector<std::int64_t> dims);  // one extent may be -1
Tensor flatten(Tensor x);                                  // [N, ...] -> [N, rest]
Tensor identity(Tensor x, const std::string& name = {});
Tensor stop_gradient(Tensor x);
Tensor slice(Tensor x, std::vector<std::int64_t> begin, std::vector<std::int64_t> size);
Tensor concat(const std::vector<Tensor>& xs, int axis);
Tensor transpose(Tensor x, std::vector<int> perm);
Tensor broadcast_to(Tensor x, std::vector<std::int64_t> dims);
Tensor pad(Tensor x, std::vector<std::int64_t> before, std::vector<std::int64_t> after);
Tensor cast(Tensor x, DType to);
// Equal-shaped tensors joined along a new axis; unstack is the inverse (the axis needs a
// known extent). split: into pieces of `sizes` along an axis, or `parts` equal ones.
Tensor stack(const std::vector<Tensor>& xs, int axis = 0);
std::vector<Tensor> unstack(Tensor x, int axis = 0);
std::vector<Tensor> split(Tensor x, const std::vector<std::int64_t>& sizes, int axis);
std::vector<Tensor> split(Tensor x, int parts, int axis);

// --- indices ---
// params [A.., V, B..] (V at `axis`), indices i32 [I..] -> [A.., I.., B..]: embedding
// lookup. The gradient for params is a deterministic segment sum: each row of dparams
// adds the rows of dy that read it in the order of their positions, the same bits on
// every run (no atomics). An index outside [0, V) is an Error naming the op and the
// index when it comes from a feed (the program checks fed indices on the host before
// the step); computed indices out of range give NaN rows, never a read out of bounds.
Tensor gather(Tensor params, Tensor indices, int axis = 0);
// indices i32 [..] -> f32 [.., depth]: on_value at the index, off_value elsewhere (a row
// of off_value for an index outside [0, depth), as TensorFlow). No gradient.
Tensor one_hot(Tensor indices, std::int64_t depth, float on_value = 1.0f, float off_value = 0.0f);
// x [.., M, N] with the entries outside a band zeroed (TensorFlow's matrix_band_part):
// kept where (num_lower < 0 or i - j <= num_lower) and (num_upper < 0 or j - i <= num_upper).
Tensor band_part(Tensor x, std::int64_t num_lower, std::int64_t num_upper);
// f32 [T, T]: 1 on and below the diagonal, 0 above (position i may attend to j <= i);
// with where(mask, scores, -inf) it makes attention causal.
Tensor causal_mask(Graph& graph, std::int64_t steps);

// --- convolution and pooling (NHWC) ---
struct ConvOptions {
  std::array<std::int64_t, 2> strides{1, 1};
  std::array<std::int64_t, 2> dilations{1, 1};
  Padding padding = Padding::same;
  std::int64_t groups = 1;
};
// x [N, H, W, Cin], w [KH, KW, Cin / groups, Cout] -> [N, OH, OW, Cout].
Tensor conv2d(Tensor x, Tensor w, ConvOptions options = {});
// The transpose (gradient) of conv2d: x [N, H, W, Cin], w [KH, KW, Cout, Cin] ->
// [N, OH, OW, Cout] with OH = H * stride (same) or (H - 1) * stride + KH (valid).
Tensor conv2d_transpose(Tensor x, Tensor w, ConvOptions options = {});
Tensor max_pool(Tensor x, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides,
                Padding padding = Padding::valid);
Tensor avg_pool(Tensor x, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides,
                Padding padding = Padding::valid);
Tensor global_avg_pool(Tensor x);  // [N, H, W, C] -> [N, C]
// NHWC images resampled to `size` [H, W] (ResizeAttrs: TensorFlow 1's align_corners=False).
Tensor resize(Tensor x, std::array<std::int64_t, 2> size, ResizeMethod method = ResizeMethod::bilinear);

// --- classification ---
Tensor softmax(Tensor x);      // over the last axis
Tensor log_softmax(Tensor x);
// logits [.., C], labels i32 [..] in [0, C) -> per-example loss [..] ([N, C] -> [N], or
// [batch, time, vocab] -> [batch, time]). Fused and stable.
Tensor sparse_softmax_cross_entropy(Tensor logits, Tensor labels);
// The same times weights [..] (a mask of padded positions: 0 there); a position of weight
// 0 contributes exactly 0. Its label must still lie in [0, C) (pad with 0, say).
Tensor sparse_softmax_cross_entropy(Tensor logits, Tensor labels, Tensor weights);
// logits [.., C] and labels [.., C] (a distribution per row) -> [..]:
// -sum(labels * log_softmax(logits)); gradients for both.
Tensor softmax_cross_entropy(Tensor logits, Tensor labels);
// logits and labels (probabilities) of one shape -> elementwise loss, stable.
Tensor sigmoid_cross_entropy(Tensor logits, Tensor labels);
// predictions [N, C], targets i32 [N] -> f32 [N]: 1 where the target's score is among
// the k largest (ties count as in), else 0.
Tensor in_top_k(Tensor predictions, Tensor targets, std::int64_t k = 1);
Tensor accuracy(Tensor logits, Tensor labels);  // mean of in_top_k(.., 1)

// --- across towers ---
// The mean of x over the towers of a synchronous step (towers::SyncTowers, and across
// processes under MPI), each tower weighted by its share of the global batch, the
// weights of the gradient average: tower k of M_k rows gets sum_j (M_j / N) x_j. The
// program stops after computing x (Program's exchanges) for the host to combine the
// towers' values, and goes on with the result. Its gradient is the same mean of dy. A
// program run on its own is its only tower: the mean is x. f32 only.
Tensor cross_tower_mean(Tensor x);

// --- normalization (channels last) ---
// [.., C] -> [2, C]: per-channel mean and biased variance over every other axis.
Tensor bn_stats(Tensor x);
// M / (M - 1) for x viewed as [M, C] (1 when M <= 1), an f32 scalar: the Bessel correction
// that makes bn_stats' biased variance an unbiased estimate.
Tensor bn_bessel(Tensor x);
// (x - mean) / sqrt(var + epsilon) * gamma + beta with stats [2, C] = (mean, var) and
// gamma, beta [C]; how.batch_stats: stats is bn_stats(x) (training), so the gradient of
// x accounts for it; otherwise they are fixed (inference, moving averages); how.relu:
// then max(0, .) in the same kernel (BatchNormAttrs, attrs.h).
Tensor batch_norm(Tensor x, Tensor stats, Tensor gamma, Tensor beta, const BatchNormAttrs& how);

// x normalized over its last axis: (x - mean) / sqrt(var + epsilon), biased variance,
// one fused kernel per direction. LayerNorm (sequence_layers.h) adds the scale and shift.
Tensor layer_norm(Tensor x, float epsilon = 1e-5f);

// --- recurrent cells ---
// One step of TensorFlow's LSTMCell, fused: z [batch, 4 units] the preactivations
// x W_x + h W_h + b in TensorFlow's gate order (i, j, f, o), state [batch, 2 units] =
// (c, h) -> the next state (c', h'), c' = sigmoid(f + forget_bias) c + sigmoid(i) tanh(j),
// h' = sigmoid(o) tanh(c'). The LSTM layer (sequence_layers.h) unrolls it.
Tensor lstm_cell(Tensor z, Tensor state, float forget_bias = 1.0f);

// --- randomness ---
// Zeroes elements with probability `rate` and scales the rest by 1 / (1 - rate); the
// mask comes from (graph seed, a key of this op, global step), so the gradient applies
// the same mask. Identity outside training (TowerContext).
Tensor dropout(Tensor x, float rate);

// --- state ---
// variable <- value after everything else in the step; returns the target to run.
Tensor assign(Tensor variable, Tensor value);

}  // namespace vkp::graph
