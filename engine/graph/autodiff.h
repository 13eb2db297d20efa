// Reverse-mode automatic differentiation: gradients(cost, xs) adds the nodes that
// compute d(cost)/d(x) for each x, walking back from the cost with each op's gradient
// rule and summing the contributions a tensor receives in a fixed order.
#pragma once

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "engine/graph/graph.h"

namespace vkp::graph {

// One gradient per x, an invalid Tensor where cost does not depend on x (or only
// through stop_gradient, argmax, ...). cost must be a scalar f32 (or pass `dcost`, the
// seed gradient, of cost's shape). Throws Error naming the op when a path needs a
// gradient rule that does not exist.
std::vector<Tensor> gradients(Tensor cost, const std::vector<Tensor>& xs, Tensor dcost = {});

using GradAndVar = std::pair<Tensor, Tensor>;  // (gradient, variable)

// Gradient processors, applied to (gradient, variable) lists in order.
// Drops pairs without a gradient.
std::vector<GradAndVar> filter_none(std::vector<GradAndVar> grads);
// Scales every gradient so that their global L2 norm is at most max_norm.
std::vector<GradAndVar> clip_by_global_norm(std::vector<GradAndVar> grads, float max_norm);
// Multiplies the gradients of variables whose name contains `pattern` by factor.
std::vector<GradAndVar> scale_gradients(std::vector<GradAndVar> grads, const std::string& pattern, float factor);

}  // namespace vkp::graph
