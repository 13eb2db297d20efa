// The op table: every OpKind's definition, registered once.
#include "engine/graph/internal/op_def.h"

#include <array>
#include <string>

#include "core/error.h"
#include "engine/graph/graph.h"

namespace vkp::graph {

extern const OpDef placeholder_op, constant_op, variable_op, unary_op, binary_op, matmul_op, reduce_op, argmax_op,
    reshape_op, identity_op, stop_gradient_op, slice_op, concat_op, transpose_op, broadcast_to_op, pad_op, cast_op,
    conv2d_op, conv2d_backprop_input_op, conv2d_backprop_filter_op, pool_op, pool_grad_op, softmax_op, softmax_xent_op,
    softmax_xent_grad_op, in_top_k_op, dropout_op, assign_op, apply_optimizer_op, bn_stats_op, batch_norm_op,
    bn_grad_sums_op, bn_grad_input_op, bn_bessel_op, resize_op, resize_grad_op, gather_op, gather_grad_op,
    layer_norm_op, layer_norm_grad_op, lstm_cell_op, lstm_cell_grad_op, cross_tower_mean_op;

const OpDef& op_def(OpKind kind) {
  // In OpKind's order.
  static const std::array<const OpDef*, static_cast<std::size_t>(OpKind::count_)> table = {&placeholder_op,
                                                                                           &constant_op,
                                                                                           &variable_op,
                                                                                           &unary_op,
                                                                                           &binary_op,
                                                                                           &matmul_op,
                                                                                           &reduce_op,
                                                                                           &argmax_op,
                                                                                           &reshape_op,
                                                                                           &identity_op,
                                                                                           &stop_gradient_op,
                                                                                           &slice_op,
                                                                                           &concat_op,
                                                                                           &transpose_op,
                                                                                           &broadcast_to_op,
                                                                                           &pad_op,
                                                                                           &cast_op,
                                                                                           &conv2d_op,
                                                                                           &conv2d_backprop_input_op,
                                                                                           &conv2d_backprop_filter_op,
                                                                                           &pool_op,
                                                                                           &pool_grad_op,
                                                                                           &softmax_op,
                                                                                           &softmax_xent_op,
                                                                                           &softmax_xent_grad_op,
                                                                                           &in_top_k_op,
                                                                                           &dropout_op,
                                                                                           &assign_op,
                                                                                           &apply_optimizer_op,
                                                                                           &bn_stats_op,
                                                                                           &batch_norm_op,
                                                                                           &bn_grad_sums_op,
                                                                                           &bn_grad_input_op,
                                                                                           &bn_bessel_op,
                                                                                           &resize_op,
                                                                                           &resize_grad_op,
                                                                                           &gather_op,
                                                                                           &gather_grad_op,
                                                                                           &layer_norm_op,
                                                                                           &layer_norm_grad_op,
                                                                                           &lstm_cell_op,
                                                                                           &lstm_cell_grad_op,
                                                                                           &cross_tower_mean_op};
  const OpDef& def = *table[static_cast<std::size_t>(kind)];
  VKP_CHECK(def.kind == kind, "the op table is out of OpKind's order at " + std::string(def.name));
  return def;
}

}  // namespace vkp::graph
