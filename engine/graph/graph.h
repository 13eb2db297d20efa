// Graph: device-independent IR. Nodes (an op kind, its attributes, its inputs) each
// produce one symbolic Tensor whose dtype and shape are inferred when the node is built,
// so that shape errors name the op where they happen. Also the building state a user
// sees in TensorFlow: name scopes, variable scopes with reuse, the tower context, and
// collections (update ops, regularization losses).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "engine/graph/attrs.h"
#include "engine/graph/build_context.h"
#include "engine/graph/tensor_type.h"

namespace vkp::graph {

class Graph;

// The op's name as nodes take it by default ("conv2d", "matmul"): for messages.
std::string_view op_name(OpKind op);

struct Node {
  OpKind op = OpKind::placeholder;
  std::string name;         // unique: "tower0/conv0/conv2d"
  std::vector<int> inputs;  // node ids
  Attrs attrs;
  TensorType type;          // extents may be kUnknown until compile
  // Node ids of the effects attached to this node (Graph::attach_effect).
  std::vector<int> effects;
};

// A handle to the output of a node. Cheap to copy; valid while its Graph lives.
class Tensor {
 public:
  Tensor() = default;
  Tensor(Graph* graph, int id) : graph_(graph), id_(id) {}

  bool valid() const { return graph_ != nullptr; }
  Graph& graph() const { return *graph_; }
  int id() const { return id_; }
  const Node& node() const;
  const TensorType& type() const;
  DType dtype() const { return type().dtype; }
  const std::vector<std::int64_t>& dims() const { return type().dims; }
  int rank() const { return type().rank(); }
  const std::string& name() const;
  bool operator==(const Tensor& o) const { return graph_ == o.graph_ && id_ == o.id_; }

 private:
  Graph* graph_ = nullptr;
  int id_ = -1;
};

class Graph {
 public:
  // `seed` drives every random thing the graph makes: initial values, dropout masks.
  explicit Graph(std::uint64_t seed = 0) : seed_(seed) {}
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Adds a node and infers its type; an inference error is rethrown as
  // "<node name>: <message>". `name` defaults to the op's name; the current scopes
  // prefix it and a suffix (_1, _2) makes it unique.
  Tensor add(OpKind op, const std::vector<Tensor>& inputs, Attrs attrs = NoAttrs{}, std::string_view name = {});

  int size() const { return static_cast<int>(nodes_.size()); }
  const Node& node(int id) const { return nodes_[static_cast<std::size_t>(id)]; }
  Tensor tensor(int id) { return {this, id}; }
  // The node called `name`, or Error(not_found).
  Tensor find(std::string_view name);
  std::uint64_t seed() const { return seed_; }
  // A new key for a random op (dropout): its stream is (seed, key, run).
  std::uint32_t next_random_key() { return ++random_keys_; }

  // Variables by scoped name, in creation order.
  const std::vector<Tensor>& variables() const { return variables_; }
  std::vector<Tensor> trainable_variables() const;
  // The variable node named `name` (no tower prefix), or an invalid Tensor.
  Tensor find_variable(std::string_view name) const;
  // get_variable's bookkeeping; see variables.h.
  void register_variable(Tensor variable);

  // Hyperparameters live in the session's scalar buffer, so callbacks change them
  // between steps without re-recording: the word index of `name` (made with `initial`
  // the first time). Words 0 and 1 hold the run counter and the global step, word 2 Adam's
  // step factor for the step (see adam_step_factor in optimizer.h).
  std::uint32_t hyperparameter(const std::string& name, float initial);
  const std::vector<std::pair<std::string, float>>& hyperparameters() const { return hyperparameters_; }
  static constexpr std::uint32_t kRunWord = 0, kStepWord = 1, kAdamStepWord = 2, kFirstHyperparameterWord = 3;

  void add_to_collection(const std::string& key, Tensor t) { collections_[key].push_back(t); }
  const std::vector<Tensor>& collection(const std::string& key) const;
  // Replaces a collection (empty: removes it); see collections.h for backups.
  void set_collection(const std::string& key, std::vector<Tensor> tensors);
  std::vector<std::string> collection_keys() const;

  // `effect` (an op with a side effect, an assign) runs in every program that computes
  // `t`, as tensorpack's control dependencies do (BatchNorm's EmaUpdate::internal); it is
  // scheduled as any effect is. A node's attached effects are Node::effects.
  void attach_effect(const Tensor& t, const Tensor& effect);

  // What the code adding nodes is inside (scopes, tower, FreezeVariables); the RAII
  // guards of variables.h change it, layers read tower() and frozen().
  BuildContext& context() { return context_; }
  const BuildContext& context() const { return context_; }
  const TowerInfo& tower() const { return context_.tower(); }
  bool frozen() const { return context_.frozen(); }

 private:
  std::string unique_name(const std::string& wanted);

  std::uint64_t seed_;
  std::uint32_t random_keys_ = 0;
  std::vector<Node> nodes_;
  std::map<std::string, int, std::less<>> names_;
  std::vector<Tensor> variables_;
  std::vector<std::pair<std::string, float>> hyperparameters_;
  std::map<std::string, std::vector<Tensor>> collections_;
  BuildContext context_;
};

// Collection keys.
inline const std::string kUpdateOps = "update_ops";
inline const std::string kRegularizationLosses = "regularization_losses";
inline const std::string kOptimizerSlots = "optimizer_slots";  // the optimizers' slot variables

}  // namespace vkp::graph
