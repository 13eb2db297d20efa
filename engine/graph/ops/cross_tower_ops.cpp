// cross_tower_mean: the only op whose value crosses towers. It records nothing: compile()
// cuts the program after its input is computed and gives it host-written storage (the
// program's exchanges), and whoever runs the program combines the towers' values there.
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"

namespace vkp::graph {
namespace {

TensorType infer_mean(const Node&, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  return in[0];
}

// With y_j = sum_k w_k x_k on every tower j and tower k's gradients weighted by w_k when
// averaged: d/dx_k of sum_j w_j L_j, divided by w_k, is sum_j w_j dy_j; the same mean.
std::vector<Tensor> grad_mean(const Node&, std::span<const Tensor>, Tensor, Tensor dy) {
  return {cross_tower_mean(dy)};
}

// One tower: the mean is the value.
RefTensor reference_mean(const Node&, std::span<const RefTensor* const> in, RefState&) { return *in[0]; }

}  // namespace

extern const OpDef cross_tower_mean_op{.kind = OpKind::cross_tower_mean,
                                       .name = "cross_tower_mean",
                                       .infer = infer_mean,
                                       .grad = grad_mean,
                                       .lower = nullptr,
                                       .workspace = nullptr,
                                       .reference = reference_mean};

Tensor cross_tower_mean(Tensor x) { return x.graph().add(OpKind::cross_tower_mean, {x}); }

}  // namespace vkp::graph
