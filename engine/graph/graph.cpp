#include "engine/graph/graph.h"

#include "core/error.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {

std::string_view op_name(OpKind op) { return op_def(op).name; }

const Node& Tensor::node() const { return graph_->node(id_); }
const TensorType& Tensor::type() const { return node().type; }
const std::string& Tensor::name() const { return node().name; }

Tensor Graph::add(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs, std::string_view name) {
  const OpDef& def = op_def(op);
  Node node;
  node.op = op;
  node.attrs = std::move(attrs);
  node.name = unique_name(context_.op_prefix() + std::string(name.empty() ? def.name : name));
  std::vector<TensorType> types;
  for (const Tensor& t : inputs) {
    if (&t.graph() != this)
      throw Error(ErrorCode::invalid_argument,
                  node.name + ": input " + (t.valid() ? "'" + t.name() + "' belongs to another graph" : "is empty"));
    node.inputs.push_back(t.id());
    types.push_back(t.type());
  }
  try {
    node.type = def.infer(node, types);
  } catch (const Error& e) {
    throw Error(e.code(), node.name + ": " + e.what());
  }
  names_.emplace(node.name, size());
  nodes_.push_back(std::move(node));
  return {this, size() - 1};
}

Tensor Graph::find(std::string_view name) {
  const auto it = names_.find(name);
  if (it == names_.end()) throw Error(ErrorCode::not_found, "no node named '" + std::string(name) + "' in the graph");
  return {this, it->second};
}

std::vector<Tensor> Graph::trainable_variables() const {
  std::vector<Tensor> out;
  for (const Tensor& v : variables_)
    if (std::get<VariableAttrs>(v.node().attrs).trainable) out.push_back(v);
  return out;
}

Tensor Graph::find_variable(std::string_view name) const {
  for (const Tensor& v : variables_)
    if (std::get<VariableAttrs>(v.node().attrs).var_name == name) return v;
  return {};
}

void Graph::register_variable(Tensor variable) { variables_.push_back(variable); }

std::uint32_t Graph::hyperparameter(const std::string& name, float initial) {
  for (std::size_t i = 0; i < hyperparameters_.size(); ++i)
    if (hyperparameters_[i].first == name) return kFirstHyperparameterWord + static_cast<std::uint32_t>(i);
  hyperparameters_.emplace_back(name, initial);
  return kFirstHyperparameterWord + static_cast<std::uint32_t>(hyperparameters_.size() - 1);
}

const std::vector<Tensor>& Graph::collection(const std::string& key) const {
  static const std::vector<Tensor> empty;
  const auto it = collections_.find(key);
  return it == collections_.end() ? empty : it->second;
}

void Graph::set_collection(const std::string& key, std::vector<Tensor> tensors) {
  if (tensors.empty())
    collections_.erase(key);
  else
    collections_[key] = std::move(tensors);
}

void Graph::attach_effect(const Tensor& t, const Tensor& effect) {
  if (!t.valid() || !effect.valid() || &t.graph() != this || &effect.graph() != this)
    throw Error(ErrorCode::invalid_argument, "attach_effect: both tensors must be of this graph");
  nodes_[static_cast<std::size_t>(t.id())].effects.push_back(effect.id());
}

std::vector<std::string> Graph::collection_keys() const {
  std::vector<std::string> keys;
  for (const auto& [key, tensors] : collections_) keys.push_back(key);
  return keys;
}

std::string Graph::unique_name(const std::string& wanted) {
  if (!names_.count(wanted)) return wanted;
  for (int i = 1;; ++i) {
    std::string candidate = wanted + "_" + std::to_string(i);
    if (!names_.count(candidate)) return candidate;
  }
}

}  // namespace vkp::graph
