#include "engine/graph/autodiff.h"

#include <map>
#include <set>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"

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

// The gradient of a slice is a pad of dy to the sliced tensor's shape (grad_slice). When
// the slices of a tensor tile it along one axis (an unrolled sequence read step by step),
// their pads' sum is the concat of their dys: no tensor-sized pad per slice, and no sum of
// them (which made an unrolled sequence's backward quadratic in its length). Returns the
// concat, having removed those pads from `parts`; an invalid Tensor when they do not tile.
Tensor concat_tiling_pads(Graph& graph, int id, std::vector<Tensor>& parts) {
  const TensorType& whole = graph.tensor(id).type();
  int axis = -1;
  std::vector<std::pair<std::int64_t, Tensor>> tiles;  // (offset along axis, dy)
  std::vector<Tensor> rest;
  for (const Tensor& part : parts) {
    const Node& n = part.node();
    const bool pad_of_slice = n.op == OpKind::pad && n.inputs.size() == 2 && n.inputs[1] == id;
    if (!pad_of_slice) {
      rest.push_back(part);
      continue;
    }
    const TensorType& dy = graph.tensor(n.inputs[0]).type();
    const std::vector<std::int64_t>& before = std::get<PadAttrs>(n.attrs).before;
    int at = -1;
    for (int d = 0; d < whole.rank(); ++d)
      if (dy.dims[static_cast<std::size_t>(d)] != whole.dims[static_cast<std::size_t>(d)] || before[static_cast<std::size_t>(d)] != 0) {
        if (at >= 0 || dy.dims[static_cast<std::size_t>(d)] < 0) return {};  // more than one axis, or unknown
        at = d;
      }
    if (at < 0 || (axis >= 0 && at != axis)) return {};
    axis = at;
    tiles.emplace_back(before[static_cast<std::size_t>(at)], graph.tensor(n.inputs[0]));
  }
  if (tiles.size() < 2 || whole.dims[static_cast<std::size_t>(axis)] < 0) return {};
  std::stable_sort(tiles.begin(), tiles.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::int64_t next = 0;
  std::vector<Tensor> pieces;
  for (const auto& [offset, dy] : tiles) {
    if (offset != next) return {};  // a gap or an overlap
    next += dy.dims()[static_cast<std::size_t>(axis)];
    pieces.push_back(dy);
  }
  if (next != whole.dims[static_cast<std::size_t>(axis)]) return {};
  parts = std::move(rest);
  return concat(pieces, axis);
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
    if (const Tensor tiled = concat_tiling_pads(graph, id, parts); tiled.valid()) parts.insert(parts.begin(), tiled);
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
