#include "engine/graph/internal/fusion.h"

#include <algorithm>
#include <set>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {
namespace {

bool is_activation(shaders::UnaryOp f) {
  return f == shaders::UnaryOp::relu || f == shaders::UnaryOp::sigmoid || f == shaders::UnaryOp::tanh ||
         f == shaders::UnaryOp::leaky_relu || f == shaders::UnaryOp::elu || f == shaders::UnaryOp::gelu;
}

bool is_gate(shaders::BinaryOp f) {
  return f == shaders::BinaryOp::relu_grad || f == shaders::BinaryOp::sigmoid_grad ||
         f == shaders::BinaryOp::tanh_grad || f == shaders::BinaryOp::leaky_relu_grad ||
         f == shaders::BinaryOp::elu_grad || f == shaders::BinaryOp::gelu_grad;
}

class Planner {
 public:
  Planner(const Graph& graph, const std::vector<int>& schedule, const std::vector<TensorType>& types,
          const std::vector<Tensor>& fetches)
      : graph_(graph),
        schedule_(schedule),
        types_(types),
        uses_(static_cast<std::size_t>(graph.size()), 0),
        consumer_(static_cast<std::size_t>(graph.size()), -1),
        step_(static_cast<std::size_t>(graph.size()), -1) {
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
    std::map<int, Fusion> fusions = plan_gemms();
    // Elementwise chains, from their last node back, among what GEMMs left.
    for (auto it = schedule_.rbegin(); it != schedule_.rend(); ++it)
      if (!claimed_.count(*it) && is_elementwise(*it))
        if (std::optional<Fusion> f = chain_to(*it)) {
          for (int n : f->absorbed) claimed_.insert(n);
          claimed_.insert(*it);
          fusions.emplace(*it, std::move(*f));
        }
    return fusions;
  }

  std::map<int, Fusion> plan_gemms() {
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

  const BinaryAttrs* binary(int id, shaders::BinaryOp fn) const {
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

  // A GEMM's chain as chain_from walks it: the fusion so far and its last node.
  struct Walk {
    Fusion f;
    int last;
    TensorType out;
    std::vector<int> views;  // views between `last` and the op next_op found
  };

  // The next op of the chain: the sole consumer of `w.last`, looking through views of the
  // same type (identity "output" of a layer, a gradient's identity), which are absorbed
  // with it when the chain goes on; -1 when there is none of the GEMM's type.
  int next_op(Walk& w) const {
    w.views.clear();
    int next = sole_consumer(w.last);
    while (next >= 0 && is_view(next) && type(next) == w.out) {
      w.views.push_back(next);
      next = sole_consumer(next);
    }
    return next >= 0 && type(next) == w.out ? next : -1;
  }

  // Absorbs `w.last` and the views after it; `next` becomes the last node.
  static void advance(Walk& w, int next) {
    w.f.absorbed.push_back(w.last);
    w.f.absorbed.insert(w.f.absorbed.end(), w.views.begin(), w.views.end());
    w.last = next;
  }

  // The node `next` reads the chain from.
  static int chain_end(const Walk& w) { return w.views.empty() ? w.last : w.views.back(); }

  std::optional<std::pair<int, Fusion>> chain_from(int matmul) const {
    Walk w{.f = {}, .last = matmul, .out = type(matmul), .views = {}};
    w.f.matmul = matmul;
    const int next = next_op(w);
    if (!takes_gate(w, next)) take_epilogue(w, next);
    return finish(std::move(w.f), w.last);
  }

  // Backward: the GEMM is dy of an activation's gradient `next`, which it absorbs.
  bool takes_gate(Walk& w, int next) const {
    if (next < 0 || graph_.node(next).op != OpKind::binary) return false;
    const Node& g = graph_.node(next);
    const BinaryAttrs& a = std::get<BinaryAttrs>(g.attrs);
    const int dy = chain_end(w);
    if (!is_gate(a.fn) || g.inputs.size() != 2 || g.inputs[1] != dy || g.inputs[0] == dy ||
        !(type(g.inputs[0]) == w.out))
      return false;
    w.f.gate = g.inputs[0];
    w.f.gate_fn = a.fn;
    w.f.gate_alpha = a.alpha;
    advance(w, next);
    return true;
  }

  // Forward: bias, residual, activation after the GEMM, each optional, in that order.
  void take_epilogue(Walk& w, int next) const {
    const std::int64_t n = w.out.dims.back();
    if (next >= 0 && binary(next, shaders::BinaryOp::add)) {
      const int b = other_input(next, chain_end(w));
      if (b >= 0 && type(b).rank() == 1 && type(b).dims[0] == n) {
        w.f.bias = b;
        advance(w, next);
        next = next_op(w);
      }
    }
    if (next >= 0 && binary(next, shaders::BinaryOp::add)) {
      const int r = other_input(next, chain_end(w));
      if (r >= 0 && type(r) == w.out) {
        w.f.residual = r;
        advance(w, next);
        next = next_op(w);
      }
    }
    if (next >= 0 && graph_.node(next).op == OpKind::unary) {
      const UnaryAttrs& a = std::get<UnaryAttrs>(graph_.node(next).attrs);
      if (is_activation(a.fn)) {
        w.f.activation = a.fn;
        w.f.activation_alpha = a.alpha;
        advance(w, next);
      }
    }
  }

  bool is_elementwise(int id) const {
    const OpKind op = graph_.node(id).op;
    return (op == OpKind::unary || op == OpKind::binary) && type(id).dtype == DType::f32;
  }

  // How a chain with output type `out` reads an outside input, if it can.
  std::optional<vk::ChainInput> mode_of(int input, const TensorType& out) const {
    const TensorType& t = type(input);
    if (t.dtype != DType::f32) return std::nullopt;
    if (t == out) return vk::ChainInput::full;
    if (t.numel() == 1) return vk::ChainInput::one;
    bool along_last = t.rank() >= 1 && t.rank() <= out.rank() && t.dims.back() == out.dims.back();
    for (int d = 0; along_last && d + 1 < t.rank(); ++d) along_last = t.dims[static_cast<std::size_t>(d)] == 1;
    if (along_last) return vk::ChainInput::channel;
    return std::nullopt;
  }

  // The chain ending at `tail`: its elementwise producers of the same type that feed
  // only the chain, while every outside input has a mode, at most 4 of them and 8 ops.
  std::optional<Fusion> chain_to(int tail) const {
    const std::vector<int> order = chain_members(tail);
    if (order.size() < 2) return std::nullopt;
    std::optional<Fusion> f = chain_steps(order);
    // An outside input written by a side effect before the chain's end (read there) is
    // refused, as for GEMMs.
    if (!f) return std::nullopt;
    const std::set<int> written = written_between(order.front(), tail);
    for (int input : f->chain_inputs)
      if (written.count(root(input))) return std::nullopt;
    return f;
  }

  // chain_to's nodes, in schedule order (the tail last; fewer than 2: no chain).
  std::vector<int> chain_members(int tail) const {
    const TensorType& out = type(tail);
    std::set<int> members{tail};
    std::vector<int> frontier{tail};
    auto outside_ok = [&](int id) {
      for (int input : graph_.node(id).inputs)
        if (!members.count(input) && !mode_of(input, out)) return false;
      return true;
    };
    if (!outside_ok(tail)) return {};
    while (!frontier.empty() && members.size() < vk::kMaxChainSteps) {
      const int id = frontier.back();
      frontier.pop_back();
      for (int input : graph_.node(id).inputs) {
        if (members.size() >= vk::kMaxChainSteps) break;
        if (members.count(input) || claimed_.count(input) || !is_elementwise(input) || !(type(input) == out)) continue;
        if (uses_[at(input)] != 1 || !members.count(consumer_[at(input)])) continue;
        members.insert(input);
        if (!outside_ok(input)) {
          members.erase(input);
          continue;
        }
        frontier.push_back(input);
      }
    }
    std::vector<int> order(members.begin(), members.end());
    std::sort(order.begin(), order.end(), [&](int a, int b) { return step_[at(a)] < step_[at(b)]; });
    return order;
  }

  // The chain's steps over its operands (outside inputs numbered in order of first use),
  // or nothing when it reads more outside inputs than a chain kernel takes.
  std::optional<Fusion> chain_steps(const std::vector<int>& order) const {
    const TensorType& out = type(order.back());
    Fusion f;
    f.chain = true;
    std::map<int, std::uint32_t> operand;  // node -> chain operand
    for (std::size_t s = 0; s < order.size(); ++s) {
      const Node& node = graph_.node(order[s]);
      std::vector<std::uint32_t> ops;
      for (int input : node.inputs) {
        if (!operand.count(input)) {
          if (f.chain_inputs.size() == vk::kMaxChainInputs) return std::nullopt;
          operand[input] = vk::chain_input(static_cast<std::uint32_t>(f.chain_inputs.size()));
          f.chain_inputs.push_back(input);
          f.modes.push_back(*mode_of(input, out));
        }
        ops.push_back(operand[input]);
      }
      if (node.op == OpKind::unary) {
        const UnaryAttrs& a = std::get<UnaryAttrs>(node.attrs);
        f.steps.push_back(vk::unary_step(a.fn, ops[0], a.alpha));
      } else {
        const BinaryAttrs& a = std::get<BinaryAttrs>(node.attrs);
        f.steps.push_back(vk::binary_step(a.fn, ops[0], ops[1], a.alpha));
      }
      operand[order[s]] = vk::chain_result(static_cast<std::uint32_t>(s));
      if (s + 1 < order.size()) f.absorbed.push_back(order[s]);
    }
    return f;
  }

  // The storage (roots) that side effects scheduled strictly between `first` and `last`
  // write.
  std::set<int> written_between(int first, int last) const {
    std::set<int> written;
    for (int s = step_[at(first)] + 1; s < step_[at(last)]; ++s) {
      const Node& node = graph_.node(schedule_[static_cast<std::size_t>(s)]);
      if (op_def(node.op).side_effect)
        for (int v : written_variables(node)) written.insert(root(v));
    }
    return written;
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
    const std::set<int> written = written_between(f.matmul, last);
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
  // An optimizer's guard, its last input when guarded, is read, not written.
  const bool guarded = node.op == OpKind::apply_optimizer && std::get<OptimizerAttrs>(node.attrs).guarded;
  for (std::size_t i = 2; i + (guarded ? 1 : 0) < node.inputs.size(); ++i) out.push_back(node.inputs[i]);
  return out;
}

std::vector<int> Fusion::inputs(const Graph& graph) const {
  if (chain) return chain_inputs;
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
