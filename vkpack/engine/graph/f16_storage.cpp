#include "vkpack/engine/graph/f16_storage.h"

#include "vkpack/engine/graph/op_def.h"

namespace vkp::graph {

F16Capability f16_capability(OpKind kind) {
  switch (kind) {
    // Elementwise kernels (unary, binary, binary_scalar, dropout) read and write either.
    case OpKind::unary:
    case OpKind::dropout: return {0b1, true};
    case OpKind::binary: return {0b11, true};
    // GEMM and convolution: the data operands (a filter is read as float32: the CPU path
    // rearranges it with a float32 copy); a filter gradient is float32, for its optimizer.
    case OpKind::matmul: return {0b11, true};
    case OpKind::conv2d: return {0b01, true};                  // (x, filter)
    case OpKind::conv2d_backprop_input: return {0b01, true};   // (dy, filter)
    case OpKind::conv2d_backprop_filter: return {0b11, false};  // (x, dy)
    case OpKind::pool: return {0b1, true};
    case OpKind::pool_grad: return {0b11, true};                // (x, dy)
    // Batch norm: x and dy; statistics, sums, gamma and beta are float32.
    case OpKind::bn_stats: return {0b1, false};                 // (x)
    case OpKind::batch_norm: return {0b1, true};                // (x, stats, gamma, beta)
    case OpKind::bn_grad_sums: return {0b101, false};           // (x, stats, dy, gamma, beta)
    case OpKind::bn_grad_input: return {0b1001, true};          // (x, stats, gamma, dy, sums, beta)
    case OpKind::bn_bessel: return {0b1, false};                // reads x's shape only
    // Shape ops are strided copies (and pad a fill): either width, or a conversion.
    case OpKind::slice:
    case OpKind::transpose: return {0b1, true};
    case OpKind::pad:                                            // (x[, like]: its shape only)
    case OpKind::broadcast_to: return {0b11, true};
    case OpKind::concat: return {~0u, true};
    // Reductions read either; their (small) results stay float32.
    case OpKind::reduce:
    case OpKind::argmax: return {0b1, false};
    default: return {};
  }
}

std::vector<char> plan_f16_storage(const F16Plan& p, const std::vector<int>& planned) {
  const auto at = [](int id) { return static_cast<std::size_t>(id); };
  std::vector<char> f16(at(p.graph.size()), 0);
  for (int id : planned) f16[at(id)] = p.types[at(id)].dtype == DType::f32;
  // The host reads fetches as float32.
  for (const Tensor& t : p.fetches) f16[at(p.owner[at(t.id())])] = 0;
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
