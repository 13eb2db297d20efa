// The op library: functions that add nodes to the graph of their inputs. Shapes are
// checked as each node is built; the first dimension may be unknown until compile.
// Layouts: images are NHWC, convolution filters HWIO ([KH, KW, Cin / groups, Cout]).
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vkpack/core/array.h"
#include "vkpack/engine/graph/graph.h"

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
// x [..., C] + b [C].
Tensor bias_add(Tensor x, Tensor b);

// --- linear algebra ---
// [.., M, K] x [.., K, N]; batch dims equal, or one operand rank 2 (shared).
Tensor matmul(Tensor a, Tensor b, bool transpose_a = false, bool transpose_b = false);

// --- reductions ---
// Over `axes` (negative count from the end); empty: every axis. The axes must be
// adjacent after sorting, or the reduction is split into several.
Tensor reduce_sum(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
Tensor reduce_mean(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
Tensor reduce_max(Tensor x, std::vector<int> axes = {}, bool keep_dims = false);
// The number of elements of x that are inf or NaN, as a float scalar (no gradient).
Tensor count_nonfinite(Tensor x);
Tensor argmax(Tensor x, int axis = -1);  // i32
// sum(x^2) / 2
Tensor l2_loss(Tensor x);

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
// logits [N, C], labels i32 [N] in [0, C) -> per-example loss [N]. Fused and stable.
Tensor sparse_softmax_cross_entropy(Tensor logits, Tensor labels);
// logits and labels (probabilities) of one shape -> elementwise loss, stable.
Tensor sigmoid_cross_entropy(Tensor logits, Tensor labels);
// predictions [N, C], targets i32 [N] -> f32 [N]: 1 where the target's score is among
// the k largest (ties count as in), else 0.
Tensor in_top_k(Tensor predictions, Tensor targets, std::int64_t k = 1);
Tensor accuracy(Tensor logits, Tensor labels);  // mean of in_top_k(.., 1)

// --- normalization (channels last) ---
// [.., C] -> [2, C]: per-channel mean and biased variance over every other axis.
Tensor bn_stats(Tensor x);
// M / (M - 1) for x viewed as [M, C] (1 when M <= 1), an f32 scalar: the Bessel correction
// that makes bn_stats' biased variance an unbiased estimate.
Tensor bn_bessel(Tensor x);
// (x - mean) / sqrt(var + epsilon) * gamma + beta with stats [2, C] = (mean, var) and
// gamma, beta [C]. batch_stats: stats is bn_stats(x) (training), so the gradient of x
// accounts for it; otherwise they are fixed (inference, moving averages). relu: then
// max(0, .) in the same kernel.
Tensor batch_norm(Tensor x, Tensor stats, Tensor gamma, Tensor beta, float epsilon, bool batch_stats,
                  bool relu = false);

// --- randomness ---
// Zeroes elements with probability `rate` and scales the rest by 1 / (1 - rate); the
// mask comes from (graph seed, a key of this op, global step), so the gradient applies
// the same mask. Identity outside training (TowerContext).
Tensor dropout(Tensor x, float rate);

// --- state ---
// variable <- value after everything else in the step; returns the target to run.
Tensor assign(Tensor variable, Tensor value);

}  // namespace vkp::graph
