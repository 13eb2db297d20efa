// The attributes of every op kind: one plain struct per kind, held by Node in a variant.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "core/array.h"
#include "engine/graph/initializer.h"
#include "engine/graph/tensor_type.h"
#include "shaders/op_codes.h"

namespace vkp::graph {

enum class OpKind : std::uint8_t {
  placeholder,    // a value fed at run time
  constant,       // a value fixed in the graph
  variable,       // a value kept on the device between runs
  unary,          // shaders::UnaryOp elementwise
  binary,         // shaders::BinaryOp elementwise with numpy broadcasting
  matmul,         // batched, either operand transposed
  reduce,         // sum / mean / max over a run of adjacent axes
  argmax,         // index of the first maximum along one axis (i32)
  reshape,        // same elements, other dims (a view)
  identity,       // a view
  stop_gradient,  // a view that gradients do not cross
  slice,
  concat,
  transpose,  // any permutation of the axes
  broadcast_to,
  pad,  // zeros around a tensor (the gradient of slice)
  cast,
  conv2d,                  // NHWC input, HWIO filter
  conv2d_backprop_input,   // the gradient of conv2d for its input; conv2d_transpose
  conv2d_backprop_filter,  // the gradient of conv2d for its filter
  pool,                    // max or average over windows, NHWC
  pool_grad,
  softmax,       // softmax or log_softmax over the last axis
  softmax_xent,  // sparse softmax cross entropy per row, fused
  softmax_xent_grad,
  in_top_k,  // 1 where the target's logit is among the k largest (f32)
  dropout,
  assign,            // variable <- value (a side effect)
  apply_optimizer,   // fused in-place optimizer update (a side effect)
  bn_stats,          // per-channel mean and biased variance [2, C]
  batch_norm,        // (x - mean) / sqrt(var + eps) * gamma + beta, per channel
  bn_grad_sums,      // per-channel sum dy and sum dy * xhat [2, C]
  bn_grad_input,     // the input gradient of batch_norm
  bn_bessel,         // M / (M - 1) for x viewed as [M, C], a scalar (1 when M <= 1)
  resize,            // nearest or bilinear resampling of NHWC images to another size
  resize_grad,       // the gradient of resize for its input
  gather,            // rows picked by i32 indices along an axis (embedding lookup)
  gather_grad,       // the gradient of gather for its params: a segment sum
  layer_norm,        // (x - mean) / sqrt(var + eps) over the last axis (BatchNormAttrs' epsilon)
  layer_norm_grad,   // the gradient of layer_norm for its input
  lstm_cell,         // one fused step of TensorFlow's LSTMCell on preactivations
  lstm_cell_grad,    // its gradient for the preactivations or the previous state
  cross_tower_mean,  // the towers' values averaged by the host mid-step (Program's exchanges)
  count_,            // number of kinds, not an op
};

struct NoAttrs {};

struct PlaceholderAttrs {
  TensorType type;
};

struct ConstantAttrs {
  Array value;
};

struct VariableAttrs {
  std::string var_name;  // scoped name, no tower prefix: "conv0/W"
  TensorType type;       // fully known
  Initializer init;
  bool trainable = true;
};

struct UnaryAttrs {
  shaders::UnaryOp fn = shaders::UnaryOp::relu;
  float alpha = 0.0f;  // leaky_relu's slope, elu's alpha
  // floor and round: the gradient passes dy through unchanged (the straight-through
  // estimator) instead of being none.
  bool straight_through = false;
};

struct BinaryAttrs {
  shaders::BinaryOp fn = shaders::BinaryOp::add;
  float alpha = 0.0f;  // for the gradient functions that take one
};

struct MatmulAttrs {
  bool transpose_a = false;
  bool transpose_b = false;
};

enum class ReduceFn : std::uint8_t { sum, mean, max, count_nonfinite };

struct ReduceAttrs {
  ReduceFn fn = ReduceFn::sum;
  int first_axis = 0;  // reduces axes [first_axis, first_axis + axis_count)
  int axis_count = 0;  // 0 with first_axis 0: every axis
  bool keep_dims = false;
};

struct AxisAttrs {
  int axis = 0;
};

struct DimsAttrs {
  std::vector<std::int64_t> dims;  // reshape: one may be -1 (inferred); broadcast_to: the target
};

struct SliceAttrs {
  std::vector<std::int64_t> begin;
  std::vector<std::int64_t> size;  // -1: to the end
};

struct PadAttrs {
  std::vector<std::int64_t> before, after;
};

struct TransposeAttrs {
  std::vector<int> perm;  // output axis i is input axis perm[i]
};

struct CastAttrs {
  DType to = DType::f32;
};

enum class Padding : std::uint8_t { same, valid };

struct Conv2DAttrs {
  std::array<std::int64_t, 2> strides{1, 1};
  std::array<std::int64_t, 2> dilations{1, 1};
  Padding padding = Padding::same;
  std::int64_t groups = 1;
  // conv2d_backprop_input: the input's [H, W]; conv2d_backprop_filter: the filter's
  // [KH, KW, Cin / groups, Cout] is filter_dims.
  std::array<std::int64_t, 2> input_hw{0, 0};
  std::array<std::int64_t, 4> filter_dims{0, 0, 0, 0};
};

enum class PoolFn : std::uint8_t { max, avg };

struct PoolAttrs {
  PoolFn fn = PoolFn::max;
  std::array<std::int64_t, 2> window{2, 2};
  std::array<std::int64_t, 2> strides{2, 2};
  Padding padding = Padding::valid;
};

struct SoftmaxAttrs {
  bool log = false;
};

struct InTopKAttrs {
  std::int64_t k = 1;
};

struct DropoutAttrs {
  float rate = 0.5f;
  std::uint32_t key = 0;  // which random stream: the same key gives the same mask
};

struct BatchNormAttrs {
  float epsilon = 1e-5f;
  // The statistics input is x's own batch statistics (bn_stats of x): the input
  // gradient then includes their dependence on x, and the statistics get none.
  bool batch_stats = true;
  // batch_norm only: y = max(0, ...), BatchNorm and ReLU in one pass (BNReLU); the
  // gradient masks dy by y > 0 before the batch-norm gradient.
  bool relu = false;
  // With batch_stats, the statistics are the global batch's (synchronized BatchNorm:
  // cross_tower_mean of the towers' moments): the input gradient then takes the sums of
  // dy and dy * xhat over the global batch too, exchanged the same way.
  bool sync_statistics = false;
};

enum class ResizeMethod : std::uint8_t { nearest, bilinear };

// TensorFlow 1's align_corners=False convention: output pixel o samples the input at
// o * in / out (no half-pixel offset); nearest takes its floor, bilinear blends the two
// neighbours (the last row and column repeat at the far edge).
struct ResizeAttrs {
  ResizeMethod method = ResizeMethod::bilinear;
  std::array<std::int64_t, 2> size{0, 0};  // output [H, W]
};

struct LstmCellAttrs {
  float forget_bias = 1.0f;
  bool state_gradient = false;  // lstm_cell_grad: for the previous state, not the preactivations
};

// The optimizer's update rule: the shaders' own list (shaders/op_codes.h).
using OptimizerKind = shaders::UpdateRule;

// Offsets of the optimizer's hyperparameters in the session's scalar buffer.
struct OptimizerAttrs {
  OptimizerKind kind = OptimizerKind::sgd;
  std::uint32_t learning_rate = 0;
  std::uint32_t momentum = 0;    // momentum, nesterov; beta1 for adam
  std::uint32_t beta2 = 0;
  std::uint32_t epsilon = 0;
  std::uint32_t weight_decay = 0;
  std::uint32_t step_factor = 0;  // adam: Graph::kAdamStepWord
  // A last input, [2]: {non-finite gradient elements, gradient factor}: the update is
  // skipped when the first is not 0 (dynamic loss scaling, loss_scale.h).
  bool guarded = false;
};

using Attrs = std::variant<NoAttrs, PlaceholderAttrs, ConstantAttrs, VariableAttrs, UnaryAttrs, BinaryAttrs, MatmulAttrs, ReduceAttrs,
                           AxisAttrs, DimsAttrs, SliceAttrs, PadAttrs, TransposeAttrs, CastAttrs, Conv2DAttrs,
                           PoolAttrs, SoftmaxAttrs, InTopKAttrs, DropoutAttrs, OptimizerAttrs, BatchNormAttrs, ResizeAttrs,
                           LstmCellAttrs>;

}  // namespace vkp::graph
