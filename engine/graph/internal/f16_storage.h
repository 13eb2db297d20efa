// Float16 storage, a stage of compile() (CompileOptions::f16_storage): the program keeps
// intermediate float tensors (activations and their gradients) in half the bytes, while
// every kernel computes in float32 (it converts what it loads and rounds what it stores;
// shaders/f16_storage.glsl). Variables, constants, feeds, fetches and the tensors an
// optimizer or an assign reads stay float32, so master weights, optimizer slots and
// what the host sees are float32.
//
// Tensors of fewer than kMinF16Elements elements stay float32: they save nothing, and
// they are where float16's range bites (a loss scaled by 2^16 is itself beyond 65504,
// the largest float16). A larger tensor is stored as float16 only where every kernel
// that touches it can: its
// producer writes float16 and each of its readers reads float16 at that operand (the
// capability table, f16_capability()). Where one cannot, the tensor stays float32, so
// turning the option on never makes a program wrong, only smaller where it can. And the
// arithmetic of state stays float32: the elementwise ops that compute an assign's value
// (moving averages, the loss scale) or an optimizer's gradient and guard.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/internal/fusion.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {

inline constexpr std::int64_t kMinF16Elements = 1024;

// OpDef::f16 of `kind` (op_def.h).
F16Capability f16_capability(OpKind kind);

// What the stage needs from compile()'s earlier ones.
struct F16Plan {
  const Graph& graph;
  const std::vector<int>& schedule;
  const std::vector<TensorType>& types;  // by node id
  const std::map<int, Fusion>& fusions;  // by the id of each chain's last node
  const std::map<int, int>& runs_fused;  // node whose step runs a fusion -> its last node
  const std::vector<char>& absorbed;     // by node id
  const std::vector<int>& owner;         // by node id: whose storage it uses
  const std::vector<Tensor>& fetches;
};

// By node id: 1 for the planned tensors (those with storage of their own in the
// activation arena; `planned` lists them) kept as float16.
std::vector<char> plan_f16_storage(const F16Plan& plan, const std::vector<int>& planned);

}  // namespace vkp::graph
