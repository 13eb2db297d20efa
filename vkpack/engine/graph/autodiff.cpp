#include "vkpack/engine/graph/autodiff.h"

#include <map>
#include <set>

#include "vkpack/core/error.h"
#include "vkpack/engine/graph/op_def.h"
#include "vkpack/engine/graph/ops.h"

namespace vkp::graph {
namespace {

// Nodes on a path from any x to the cost.
std::set<int> between(const Graph& graph, int cost, const std::set<int>& xs) {
  std::map<int, bool> memo;
  std::function<bool(int)> reaches = [&](int id) -> bool {
    if (const auto it = memo.find(id); it != memo.end()) return it->second;
    bool hit = xs.count(id) > 0;
    for (int input : graph.node(id).inputs) hit = reaches(input) || hit;
    return memo[id] = hit;
  };
  reaches(cost);
  std::set<int> out;
  for (const auto& [id, hit] : memo)
    if (hit) out.insert(id);
  return out;
}

}  // namespace

std::vector<Tensor> gradients(Tensor cost, const std::vector<Tensor>& xs, Tensor dcost) {
  Graph& graph = cost.graph();
  std::set<int> targets;
  for (const Tensor& x : xs) targets.insert(x.id());
  const std::set<int> live = between(graph, cost.id(), targets);
  if (!dcost.valid()) {
    if (cost.type().numel() != 1 || cost.dtype() != DType::f32)
      throw Error(ErrorCode::invalid_argument, "gradients: cost '" + cost.name() + "' is " + to_string(cost.type()) +
                                                   ", not a scalar f32; reduce it or pass dcost");
    dcost = broadcast_to(scalar(graph, 1.0f), cost.dims());
  }
  // Contributions in the order they are made, summed once every reader is done.
  std::map<int, std::vector<Tensor>> pending;
  pending[cost.id()].push_back(dcost);
  std::map<int, Tensor> total;
  auto sum = [&](int id) -> Tensor {
    std::vector<Tensor>& parts = pending[id];
    if (parts.empty()) return {};
    Tensor t = parts[0];
    for (std::size_t i = 1; i < parts.size(); ++i) t = add(t, parts[i]);
    return t;
  };
  // Node ids grow in creation order, which is a topological order: walk it backward.
  for (auto it = live.rbegin(); it != live.rend(); ++it) {
    const int id = *it;
    const Tensor dy = sum(id);
    total[id] = dy;
    const Node& node = graph.node(id);
    if (!dy.valid() || node.inputs.empty()) continue;
    const OpDef& def = op_def(node.op);
    if (def.grad == nullptr)
      throw Error(ErrorCode::unsupported, "gradients: " + node.name + " (" + std::string(def.name) +
                                              ") has no gradient rule");
    std::vector<Tensor> inputs;
    for (int input : node.inputs) inputs.push_back(graph.tensor(input));
    const Node copy = node;  // the rule adds nodes, which may move graph storage
    const std::vector<Tensor> grads = def.grad(copy, inputs, graph.tensor(id), dy);
    for (std::size_t i = 0; i < grads.size() && i < inputs.size(); ++i)
      if (grads[i].valid() && live.count(inputs[i].id())) pending[inputs[i].id()].push_back(grads[i]);
  }
  std::vector<Tensor> out;
  for (const Tensor& x : xs) {
    const auto it = total.find(x.id());
    out.push_back(it == total.end() ? Tensor() : it->second);
  }
  return out;
}

std::vector<GradAndVar> filter_none(std::vector<GradAndVar> grads) {
  std::erase_if(grads, [](const GradAndVar& gv) { return !gv.first.valid(); });
  return grads;
}

std::vector<GradAndVar> clip_by_global_norm(std::vector<GradAndVar> grads, float max_norm) {
  grads = filter_none(std::move(grads));
  if (grads.empty()) return grads;
  Graph& g = grads[0].first.graph();
  Tensor squares;
  for (const GradAndVar& gv : grads) {
    const Tensor s = reduce_sum(square(gv.first));
    squares = squares.valid() ? add(squares, s) : s;
  }
  // factor = max_norm / max(norm, max_norm): 1 when the norm is within bounds.
  const Tensor limit = scalar(g, max_norm);
  const Tensor factor = div(limit, maximum(sqrt(squares), limit));
  for (GradAndVar& gv : grads) gv.first = mul(gv.first, factor);
  return grads;
}

std::vector<GradAndVar> scale_gradients(std::vector<GradAndVar> grads, const std::string& pattern, float factor) {
  for (GradAndVar& gv : grads)
    if (gv.first.valid() && std::get<VariableAttrs>(gv.second.node().attrs).var_name.find(pattern) != std::string::npos)
      gv.first = gv.first * factor;
  return grads;
}

}  // namespace vkp::graph
