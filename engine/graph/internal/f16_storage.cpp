#include "engine/graph/internal/f16_storage.h"

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {

F16Capability f16_capability(OpKind kind) { return op_def(kind).f16; }

namespace {

// Ops that only move or combine elements: state arithmetic runs through them.
bool elementwise_or_shape(OpKind kind) {
  switch (kind) {
    case OpKind::unary:
    case OpKind::binary:
    case OpKind::reshape:
    case OpKind::identity:
    case OpKind::stop_gradient:
    case OpKind::slice:
    case OpKind::concat:
    case OpKind::transpose:
    case OpKind::broadcast_to:
    case OpKind::pad: return true;
    default: return false;
  }
}

// What becomes a variable's next value is computed in float32 all the way from the last
// op that is not elementwise: an assign's value (moving averages, the loss scale and its
// counters) and an optimizer update's gradient and guard. Rounded to float16 on the way,
// a moving average would drift by 2^-11 a step and a loss scale of 2^15 doubled would
// become infinite (65536 > 65504, float16's largest).
void keep_state_arithmetic_f32(const F16Plan& p, std::vector<char>& f16) {
  const auto at = [](int id) { return static_cast<std::size_t>(id); };
  std::vector<int> stack;
  for (int id : p.schedule) {
    const Node& node = p.graph.node(id);
    if (node.op == OpKind::assign) stack.push_back(node.inputs[1]);
    if (node.op == OpKind::apply_optimizer) {
      stack.push_back(node.inputs[1]);
      if (std::get<OptimizerAttrs>(node.attrs).guarded) stack.push_back(node.inputs.back());
    }
  }
  std::vector<char> seen(f16.size(), 0);
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (seen[at(id)]++) continue;
    if (const int owner = p.owner[at(id)]; owner >= 0) f16[at(owner)] = 0;  // -1: absorbed by a fusion
    const Node& node = p.graph.node(id);
    if (elementwise_or_shape(node.op))
      for (int input : node.inputs) stack.push_back(input);
  }
}

}  // namespace

std::vector<char> plan_f16_storage(const F16Plan& p, const std::vector<int>& planned) {
  const auto at = [](int id) { return static_cast<std::size_t>(id); };
  std::vector<char> f16(at(p.graph.size()), 0);
  for (int id : planned)
    f16[at(id)] = p.types[at(id)].dtype == DType::f32 && p.types[at(id)].numel() >= kMinF16Elements;
  // The host reads fetches as float32.
  for (const Tensor& t : p.fetches) f16[at(p.owner[at(t.id())])] = 0;
  keep_state_arithmetic_f32(p, f16);
  // Every dispatch: what it writes and what it reads, with what each operand allows.
  auto reads = [&](int input, bool allowed) {
    if (!allowed) f16[at(p.owner[at(input)])] = 0;
  };
  for (int id : p.schedule) {
    int node_id = id;
    if (const auto it = p.runs_fused.find(id); it != p.runs_fused.end()) {
      node_id = it->second;  // the fusion's last node, which its dispatch computes
    } else if (p.absorbed[at(id)]) {
      continue;
    }
    const auto fused = p.fusions.find(node_id);
    if (fused != p.fusions.end() && p.runs_fused.count(id)) {
      const Fusion& f = fused->second;
      if (f.chain) {  // elementwise_chain: every input and the output in either width
        continue;
      }
      // A GEMM with an epilogue: the matmul's operands as the matmul allows, bias,
      // residual and gate in either width (epilogue.glsl), the output as the matmul writes.
      const Node& matmul = p.graph.node(f.matmul);
      const F16Capability cap = f16_capability(matmul.op);
      for (std::size_t i = 0; i < matmul.inputs.size(); ++i) reads(matmul.inputs[i], (cap.inputs >> i) & 1u);
      if (!cap.output) f16[at(node_id)] = 0;
      continue;
    }
    const Node& node = p.graph.node(node_id);
    const OpDef& def = op_def(node.op);
    if (def.lower == nullptr) continue;  // views, variables, constants, feeds read nothing
    const F16Capability cap = f16_capability(node.op);
    for (std::size_t i = 0; i < node.inputs.size(); ++i) reads(node.inputs[i], i < 32 && ((cap.inputs >> i) & 1u));
    if (!cap.output && !def.side_effect) f16[at(p.owner[at(node_id)])] = 0;
  }
  return f16;
}

}  // namespace vkp::graph
