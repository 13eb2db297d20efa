#include "engine/graph/collections.h"

#include "core/error.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"

namespace vkp::graph {

CollectionBackup backup_collection(const Graph& graph, const std::vector<std::string>& keys) {
  CollectionBackup backup;
  for (const std::string& key : keys.empty() ? graph.collection_keys() : keys) backup[key] = graph.collection(key);
  return backup;
}

void restore_collection(Graph& graph, const CollectionBackup& backup) {
  for (const auto& [key, tensors] : backup) graph.set_collection(key, tensors);
}

FreezeCollection::FreezeCollection(Graph& graph, const std::vector<std::string>& keys)
    : graph_(graph), backup_(backup_collection(graph, keys)) {
  require(!keys.empty(), ErrorCode::invalid_argument, "FreezeCollection: name the collections to freeze");
}

FreezeCollection::~FreezeCollection() {
  // Moved back, not copied: nothing to allocate but a collection's map entry.
  for (auto& [key, tensors] : backup_) graph_.set_collection(key, std::move(tensors));
}

bool dependency_of_targets(const std::vector<Tensor>& targets, const Tensor& t) {
  require(t.valid(), ErrorCode::invalid_argument, "dependency_of_targets: the tensor is empty");
  std::vector<char> seen;
  std::vector<int> stack;
  for (const Tensor& target : targets) {
    if (!target.valid() || &target.graph() != &t.graph()) continue;  // another graph's cannot depend on it
    stack.push_back(target.id());
  }
  // Inputs are made before the nodes that read them: nothing below t's id can lead to it.
  while (!stack.empty()) {
    const int id = stack.back();
    stack.pop_back();
    if (id == t.id()) return true;
    if (id < t.id()) continue;
    if (seen.size() <= static_cast<std::size_t>(id)) seen.resize(static_cast<std::size_t>(id) + 1, 0);
    if (seen[static_cast<std::size_t>(id)]) continue;
    seen[static_cast<std::size_t>(id)] = 1;
    for (int input : Tensor(&t.graph(), id).node().inputs) stack.push_back(input);
  }
  return false;
}

Tensor print_stat(Tensor x, const std::string& message) {
  require(x.valid(), ErrorCode::invalid_argument, "print_stat '" + message + "': the tensor is empty");
  Graph& g = x.graph();
  // An inference tower built in the same graph (a predictor's, an InferenceRunner's) has
  // placeholders the training step never feeds: only training towers print.
  if (!g.tower().is_training) return x;
  NameScope scope(g, "print_stat");
  const Tensor values = cast(x, DType::f32);
  g.add_to_collection(kPrintStats, identity(stack({reduce_mean(values), rms(values)}), message));
  return x;
}

}  // namespace vkp::graph
