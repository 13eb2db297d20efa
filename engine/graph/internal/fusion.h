// Epilogue fusion, a stage of compile(): a matmul (or a convolution, or its input
// gradient: any op with OpDef::lower_with_epilogue) and the elementwise ops that consume
// it alone (a bias add, a residual add, an activation; or, backward, an activation's
// gradient gating it) become one GEMM dispatch whose epilogue does the elementwise
// work (vk::GemmEpilogue), and the intermediate tensors are never stored.
//
//   matmul -> [add bias [n]] -> [add residual (same shape)] -> [relu | sigmoid | tanh |
//             leaky_relu | elu]
//   matmul -> relu_grad | sigmoid_grad | tanh_grad | leaky_relu_grad | elu_grad (as dy)
//
// Then elementwise chains: up to 8 unary and binary ops of one shape, each feeding only
// the next ones, over up to 4 outside inputs of that shape, a vector along its last
// axis, or one value, become one vk::elementwise_chain dispatch.
//
// A node is absorbed only when its one consumer is the next node of the chain (views
// of the same type are looked through) and no fetch reads it. The fused dispatch runs
// where every operand still holds what the separate ops would have read: at the
// chain's last node, or at the matmul when a side effect scheduled between them (an
// assign, an optimizer update) writes an operand of the matmul; a chain whose operands
// such an effect writes on both sides is not fused. The graph itself is unchanged:
// references, gradients and CompileOptions::fuse = false see the ops one by one.
#pragma once

#include <map>
#include <optional>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/internal/lower.h"
#include "engine/vk/kernels/elementwise_chain.h"
#include "engine/vk/kernels/gemm.h"

namespace vkp::graph {

struct Fusion {
  int matmul = -1;                      // the GEMM: an op with OpDef::lower_with_epilogue
  int bias = -1, residual = -1;         // input nodes of the epilogue (-1: none)
  std::optional<shaders::UnaryOp> activation;
  float activation_alpha = 0.0f;
  int gate = -1;                        // the gradient function's first operand
  std::optional<shaders::BinaryOp> gate_fn;
  float gate_alpha = 0.0f;
  std::vector<int> absorbed;            // the chain's nodes before its last, not lowered
  // Where the fused dispatch runs: at the chain's last node, or at the matmul when a
  // side effect between them writes one of the matmul's operands (an optimizer update
  // right after the last read of a weight, the usual case backward).
  bool at_matmul = false;

  // An elementwise chain instead (matmul -1): its ops as vk::elementwise_chain steps
  // over `chain_inputs`, each read as `modes` says.
  bool chain = false;
  std::vector<vk::ChainStep> steps;
  std::vector<int> chain_inputs;
  std::vector<vk::ChainInput> modes;
  // What the fused dispatch reads: the matmul's inputs, then bias, residual, gate.
  std::vector<int> inputs(const Graph& graph) const;
};

// The variables a side-effect node writes: assign writes input 0; an optimizer update
// its variable (0) and its slots (2, 3).
std::vector<int> written_variables(const Node& node);

// Fusions by the id of each chain's last node (which the fused dispatch computes).
std::map<int, Fusion> plan_fusions(const Graph& graph, const std::vector<int>& schedule,
                                   const std::vector<TensorType>& types, const std::vector<Tensor>& fetches);

}  // namespace vkp::graph
