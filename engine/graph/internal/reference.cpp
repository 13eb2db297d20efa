#include "engine/graph/internal/reference.h"

#include <set>

#include "core/error.h"
#include "engine/graph/graph.h"
#include "engine/graph/initializer.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {

RefTensor RefTensor::zeros(TensorType type) {
  const std::int64_t n = type.numel();
  if (n < 0) throw Error(ErrorCode::invalid_argument, "reference tensor of unknown shape " + to_string(type));
  return {std::move(type), std::vector<double>(static_cast<std::size_t>(n), 0.0)};
}

RefTensor RefTensor::from(const Array& a) {
  RefTensor t{{a.dtype(), a.shape().dims()}, std::vector<double>(static_cast<std::size_t>(a.numel()))};
  switch (a.dtype()) {
    case DType::f32: std::copy(a.data<float>().begin(), a.data<float>().end(), t.values.begin()); break;
    case DType::i32: std::copy(a.data<std::int32_t>().begin(), a.data<std::int32_t>().end(), t.values.begin()); break;
    case DType::i64: std::copy(a.data<std::int64_t>().begin(), a.data<std::int64_t>().end(), t.values.begin()); break;
    case DType::u8: std::copy(a.data<std::uint8_t>().begin(), a.data<std::uint8_t>().end(), t.values.begin()); break;
    case DType::f16: throw Error(ErrorCode::unsupported, "the reference does not read f16 arrays");
  }
  return t;
}

Array RefTensor::to_array() const {
  Array a(type.dtype, type.shape());
  switch (type.dtype) {
    case DType::f32:
      for (std::size_t i = 0; i < values.size(); ++i) a.data<float>()[i] = static_cast<float>(values[i]);
      break;
    case DType::i32:
      for (std::size_t i = 0; i < values.size(); ++i) a.data<std::int32_t>()[i] = static_cast<std::int32_t>(values[i]);
      break;
    default: throw Error(ErrorCode::unsupported, "the reference writes f32 and i32 arrays only");
  }
  return a;
}

RefState RefState::initial(const Graph& graph) {
  RefState state;
  state.seed = graph.seed();
  for (const Tensor& v : graph.variables()) {
    const VariableAttrs& a = std::get<VariableAttrs>(v.node().attrs);
    state.variables[a.var_name] = RefTensor::from(initial_value(a.init, a.type.shape(), graph.seed(), a.var_name));
  }
  state.scalars.assign(Graph::kFirstHyperparameterWord + graph.hyperparameters().size(), 0.0);
  for (std::size_t i = 0; i < graph.hyperparameters().size(); ++i)
    state.scalars[Graph::kFirstHyperparameterWord + i] = graph.hyperparameters()[i].second;
  return state;
}

namespace {

// Post-order from `roots`: every node before the nodes that read it.
void visit(const Graph& graph, int id, std::set<int>& seen, std::vector<int>& order) {
  if (!seen.insert(id).second) return;
  for (int input : graph.node(id).inputs) visit(graph, input, seen, order);
  order.push_back(id);
}

}  // namespace

std::vector<RefTensor> evaluate_reference(const Graph& graph, const std::map<int, RefTensor>& feeds,
                                          const std::vector<Tensor>& fetches, const std::vector<Tensor>& targets,
                                          RefState& state) {
  state.graph = &graph;
  std::set<int> seen;
  std::vector<int> order;
  for (const Tensor& t : fetches) visit(graph, t.id(), seen, order);
  std::vector<int> effects;
  for (const Tensor& t : targets) {
    for (int input : t.node().inputs) visit(graph, input, seen, order);
    effects.push_back(t.id());
  }
  std::map<int, RefTensor> values;
  auto run = [&](int id) {
    const Node& node = graph.node(id);
    if (const auto fed = feeds.find(id); fed != feeds.end()) {
      values[id] = fed->second;
      return;
    }
    std::vector<const RefTensor*> inputs;
    for (int input : node.inputs) inputs.push_back(&values.at(input));
    try {
      values[id] = op_def(node.op).reference(node, inputs, state);
    } catch (const Error& e) {
      throw Error(e.code(), "reference of " + node.name + ": " + e.what());
    }
  };
  for (int id : order)
    if (!op_def(graph.node(id).op).side_effect) run(id);
  // Side effects last, as a program runs them, each reading the values of the step.
  for (int id : order)
    if (op_def(graph.node(id).op).side_effect) run(id);
  for (int id : effects)
    if (!values.count(id)) run(id);
  std::vector<RefTensor> out;
  for (const Tensor& t : fetches) out.push_back(values.at(t.id()));
  return out;
}

}  // namespace vkp::graph
