#include "vkpack/engine/graph/fusion.h"

#include <set>

#include "vkpack/engine/graph/op_def.h"

namespace vkp::graph {
namespace {

bool is_activation(vk::UnaryOp f) {
  return f == vk::UnaryOp::relu || f == vk::UnaryOp::sigmoid || f == vk::UnaryOp::tanh ||
         f == vk::UnaryOp::leaky_relu || f == vk::UnaryOp::elu;
}

bool is_gate(vk::BinaryOp f) {
  return f == vk::BinaryOp::relu_grad || f == vk::BinaryOp::sigmoid_grad || f == vk::BinaryOp::tanh_grad ||
         f == vk::BinaryOp::leaky_relu_grad || f == vk::BinaryOp::elu_grad;
}

class Planner {
 public:
  Planner(const Graph& graph, const std::vector<int>& schedule, const std::vector<TensorType>& types,
          const std::vector<Tensor>& fetches)
      : graph_(graph), schedule_(schedule), types_(types), uses_(static_cast<std::size_t>(graph.size()), 0),
        consumer_(static_cast<std::size_t>(graph.size()), -1), step_(static_cast<std::size_t>(graph.size()), -1) {
    for (int step = 0; step < static_cast<int>(schedule.size()); ++step) {
      const int id = schedule[static_cast<std::size_t>(step)];
      step_[at(id)] = step;
      for (int input : graph.node(id).inputs) {
        ++uses_[at(input)];
        consumer_[at(input)] = id;
      }
    }
    for (const Tensor& t : fetches) uses_[at(t.id())] += 2;  // never absorbed
  }

  std::map<int, Fusion> plan() {
    std::map<int, Fusion> fusions;
    for (int id : schedule_) {
      const Node& node = graph_.node(id);
      const OpDef& def = op_def(node.op);
      if (def.lower_with_epilogue == nullptr || claimed_.count(id)) continue;
      std::vector<TensorType> in;
      for (int input : node.inputs) in.push_back(type(input));
      if (!def.takes_epilogue(node, in)) continue;
      if (std::optional<std::pair<int, Fusion>> f = chain_from(id)) {
        for (int n : f->second.absorbed) claimed_.insert(n);
        claimed_.insert(f->first);
        fusions.emplace(f->first, std::move(f->second));
      }
    }
    return fusions;
  }

 private:
  std::size_t at(int id) const { return static_cast<std::size_t>(id); }
  const TensorType& type(int id) const { return types_[at(id)]; }

  // The one consumer of `id`, when it has exactly one use and nothing fetches it.
  int sole_consumer(int id) const { return uses_[at(id)] == 1 ? consumer_[at(id)] : -1; }

  const BinaryAttrs* binary(int id, vk::BinaryOp fn) const {
    const Node& n = graph_.node(id);
    if (n.op != OpKind::binary) return nullptr;
    const BinaryAttrs& a = std::get<BinaryAttrs>(n.attrs);
    return a.fn == fn ? &a : nullptr;
  }

  // The input of binary node `id` other than `from` (-1 when both are `from`).
  int other_input(int id, int from) const {
    const Node& n = graph_.node(id);
    if (n.inputs.size() != 2 || n.inputs[0] == n.inputs[1]) return -1;
    return n.inputs[0] == from ? n.inputs[1] : n.inputs[0];
  }

  bool is_view(int id) const {
    const OpKind op = graph_.node(id).op;
    return op == OpKind::identity || op == OpKind::stop_gradient || op == OpKind::reshape;
  }

  std::optional<std::pair<int, Fusion>> chain_from(int matmul) const {
    Fusion f;
    f.matmul = matmul;
    const TensorType& out = type(matmul);
    const std::int64_t n = out.dims.back();
    int last = matmul;
    // The next op of the chain: the sole consumer of `last`, looking through views of
    // the same type (identity "output" of a layer, a gradient's identity), which are
    // absorbed with it when the chain goes on.
    std::vector<int> views;
    auto next_op = [&] {
      views.clear();
      int next = sole_consumer(last);
      while (next >= 0 && is_view(next) && type(next) == out) {
        views.push_back(next);
        next = sole_consumer(next);
      }
      return next >= 0 && type(next) == out ? next : -1;
    };
    auto advance = [&](int next) {
      f.absorbed.push_back(last);
      f.absorbed.insert(f.absorbed.end(), views.begin(), views.end());
      last = next;
    };
    int next = next_op();
    // Backward: the matmul is dy of an activation's gradient.
    if (next >= 0 && graph_.node(next).op == OpKind::binary) {
      const BinaryAttrs& a = std::get<BinaryAttrs>(graph_.node(next).attrs);
      const Node& g = graph_.node(next);
      const int dy = views.empty() ? last : views.back();
      if (is_gate(a.fn) && g.inputs.size() == 2 && g.inputs[1] == dy && g.inputs[0] != dy && type(g.inputs[0]) == out) {
        f.gate = g.inputs[0];
        f.gate_fn = a.fn;
        f.gate_alpha = a.alpha;
        advance(next);
        return finish(std::move(f), last);
      }
    }
    // Forward: bias, residual, activation, each optional, in that order.
    auto from = [&] { return views.empty() ? last : views.back(); };
    if (next >= 0 && binary(next, vk::BinaryOp::add)) {
      const int b = other_input(next, from());
      if (b >= 0 && type(b).rank() == 1 && type(b).dims[0] == n) {
        f.bias = b;
        advance(next);
        next = next_op();
      }
    }
    if (next >= 0 && binary(next, vk::BinaryOp::add)) {
      const int r = other_input(next, from());
      if (r >= 0 && type(r) == out) {
        f.residual = r;
        advance(next);
        next = next_op();
      }
    }
    if (next >= 0 && graph_.node(next).op == OpKind::unary) {
      const UnaryAttrs& a = std::get<UnaryAttrs>(graph_.node(next).attrs);
      if (is_activation(a.fn)) {
        f.activation = a.fn;
        f.activation_alpha = a.alpha;
        advance(next);
      }
    }
    return finish(std::move(f), last);
  }

  // The node whose storage `id` is (through views).
  int root(int id) const {
    while (is_view(id)) id = graph_.node(id).inputs[0];
    return id;
  }

  // The chain ending at `last`, placed where its operands are intact (fusion.h), unless
  // it is the matmul alone or no such place exists.
  std::optional<std::pair<int, Fusion>> finish(Fusion f, int last) const {
    if (last == f.matmul) return std::nullopt;
    std::set<int> written;
    for (int s = step_[at(f.matmul)] + 1; s < step_[at(last)]; ++s) {
      const Node& node = graph_.node(schedule_[static_cast<std::size_t>(s)]);
      if (op_def(node.op).side_effect)
        for (int v : written_variables(node)) written.insert(root(v));
    }
    auto untouched = [&](const std::vector<int>& ids) {
      for (int id : ids)
        if (written.count(root(id))) return false;
      return true;
    };
    std::vector<int> extras;
    for (int id : {f.bias, f.residual, f.gate})
      if (id >= 0) extras.push_back(id);
    if (untouched(graph_.node(f.matmul).inputs)) return std::pair{last, std::move(f)};
    for (int id : extras)
      if (step_[at(id)] < 0 || step_[at(id)] > step_[at(f.matmul)]) return std::nullopt;
    if (!untouched(extras)) return std::nullopt;
    f.at_matmul = true;
    return std::pair{last, std::move(f)};
  }

  const Graph& graph_;
  const std::vector<int>& schedule_;
  const std::vector<TensorType>& types_;
  std::vector<int> uses_, consumer_, step_;
  std::set<int> claimed_;
};

}  // namespace

std::vector<int> written_variables(const Node& node) {
  std::vector<int> out{node.inputs[0]};
  for (std::size_t i = 2; i < node.inputs.size(); ++i) out.push_back(node.inputs[i]);
  return out;
}

std::vector<int> Fusion::inputs(const Graph& graph) const {
  std::vector<int> in = graph.node(matmul).inputs;
  for (int extra : {bias, residual, gate})
    if (extra >= 0) in.push_back(extra);
  return in;
}

std::map<int, Fusion> plan_fusions(const Graph& graph, const std::vector<int>& schedule,
                                   const std::vector<TensorType>& types, const std::vector<Tensor>& fetches) {
  return Planner(graph, schedule, types, fetches).plan();
}

}  // namespace vkp::graph
