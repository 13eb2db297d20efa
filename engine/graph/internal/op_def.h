// OpDef: everything vkpack knows about one op kind, registered once (op_def.cpp):
// shape inference, gradient rule, lowering to kernels, and a CPU reference in double
// precision that tests hold the kernels and the gradient rules to.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/graph/attrs.h"
#include "engine/graph/tensor_type.h"

namespace vkp::vk {
class Device;
struct GemmEpilogue;
}  // namespace vkp::vk

namespace vkp::graph {

// Declared, not included: graph.cpp reads this table (Graph::add infers types through
// it), so the table does not see the Graph.
struct Node;
class Tensor;
struct LowerContext;  // lower.h
struct RefTensor;     // reference.h
struct RefState;

// What an op's lowering can keep in float16 (CompileOptions::f16_storage, f16_storage.h):
// bit i of `inputs` for input i, and its output. The kernels it records must have the
// float16 builds to match (a shader has them when its source handles VKP_F16,
// cmake/VkpackShaders.cmake); which bindings are float16 follows from the operands'
// slices at launch (vk::f16_mask), so this is the one list of what is kept in float16.
struct F16Capability {
  std::uint32_t inputs = 0;
  bool output = false;
};

struct OpDef {
  OpKind kind;
  std::string_view name;
  // The output type from the inputs'. Extents may be kUnknown (at build time) and
  // checks then apply only to known ones; throws Error with a message that names the
  // shapes (the graph prefixes the node name).
  TensorType (*infer)(const Node& node, std::span<const TensorType> inputs);
  // Adds nodes computing d(cost)/d(input i) from dy = d(cost)/d(output); an invalid
  // Tensor where an input has no gradient. nullptr: not differentiable.
  std::vector<Tensor> (*grad)(const Node& node, std::span<const Tensor> inputs, Tensor y, Tensor dy);
  // Records the node's kernels (lower.h); nullptr for ops that record nothing
  // (placeholders, constants, variables, views).
  void (*lower)(LowerContext& ctx);
  // Scratch bytes lower() needs, from concrete types; nullptr: none.
  std::size_t (*workspace)(const Node& node, std::span<const TensorType> inputs, const TensorType& output,
                           const vk::Device& device);
  // The output computed on the host in double.
  RefTensor (*reference)(const Node& node, std::span<const RefTensor* const> inputs, RefState& state);
  // The output shares the storage of input 0 (reshape, identity, stop_gradient).
  bool view = false;
  // The op changes a variable; it runs after everything else in a step.
  bool side_effect = false;
  // A GEMM-like op that can finish its output with a vk::GemmEpilogue (fusion.h):
  // whether it can for these concrete input types, and lower() with one.
  bool (*takes_epilogue)(const Node& node, std::span<const TensorType> inputs) = nullptr;
  void (*lower_with_epilogue)(LowerContext& ctx, const vk::GemmEpilogue& epilogue) = nullptr;
  // The operands and result its kernels read and write as float16; none by default.
  F16Capability f16{};
};

const OpDef& op_def(OpKind kind);

}  // namespace vkp::graph
