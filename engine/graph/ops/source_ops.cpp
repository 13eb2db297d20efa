// Sources: placeholder, constant, variable. Their storage is the program's business
// (feeds, uploaded constants, the session's variables), so none of them records kernels.
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"

namespace vkp::graph {
namespace {

TensorType infer_placeholder(const Node& node, std::span<const TensorType>) {
  return std::get<PlaceholderAttrs>(node.attrs).type;
}

RefTensor reference_placeholder(const Node& node, std::span<const RefTensor* const>, RefState&) {
  throw Error(ErrorCode::invalid_argument, "placeholder '" + node.name + "' was not fed");
}

TensorType infer_constant(const Node& node, std::span<const TensorType>) {
  const Array& value = std::get<ConstantAttrs>(node.attrs).value;
  if (value.dtype() != DType::f32 && value.dtype() != DType::i32)
    detail::fail("constants are f32 or i32, got " + describe(value));
  return {value.dtype(), value.shape().dims()};
}

RefTensor reference_constant(const Node& node, std::span<const RefTensor* const>, RefState&) {
  return RefTensor::from(std::get<ConstantAttrs>(node.attrs).value);
}

TensorType infer_variable(const Node& node, std::span<const TensorType>) {
  const VariableAttrs& attrs = std::get<VariableAttrs>(node.attrs);
  if (!attrs.type.known()) detail::fail("variable " + attrs.var_name + " needs a fully known shape");
  return attrs.type;
}

RefTensor reference_variable(const Node& node, std::span<const RefTensor* const>, RefState& state) {
  const std::string& name = std::get<VariableAttrs>(node.attrs).var_name;
  const auto it = state.variables.find(name);
  if (it == state.variables.end()) throw Error(ErrorCode::not_found, "variable " + name + " has no value");
  return it->second;
}

// A placeholder, constant or variable is a leaf: its gradient is what reaches it.
std::vector<Tensor> grad_leaf(const Node&, std::span<const Tensor>, Tensor, Tensor) { return {}; }

}  // namespace

extern const OpDef placeholder_op{OpKind::placeholder,  "placeholder", infer_placeholder, grad_leaf, nullptr, nullptr,
                                  reference_placeholder};
extern const OpDef constant_op{OpKind::constant, "constant", infer_constant,    grad_leaf,
                               nullptr,          nullptr,    reference_constant};
extern const OpDef variable_op{OpKind::variable, "variable", infer_variable,    grad_leaf,
                               nullptr,          nullptr,    reference_variable};

Tensor placeholder(Graph& graph, const std::string& name, TensorType type) {
  for (std::int64_t d : type.dims)
    if (d < kUnknown) detail::fail("placeholder " + name + ": extents must be >= 0 or kUnknown");
  return graph.add(OpKind::placeholder, {}, PlaceholderAttrs{std::move(type)}, name);
}

Tensor constant(Graph& graph, Array value, const std::string& name) {
  return graph.add(OpKind::constant, {}, ConstantAttrs{std::move(value)}, name);
}

Tensor scalar(Graph& graph, float value) {
  return constant(graph, Array::from<float>(Shape{}, std::vector<float>{value}), "scalar");
}

}  // namespace vkp::graph
