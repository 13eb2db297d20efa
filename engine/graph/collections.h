// Graph collections kept and put back (tensorpack's backup_collection,
// restore_collection, freeze_collection), what a set of targets depends on
// (dependency_of_targets / dependency_of_fetches), and print_stat, which registers a
// tensor in a collection that a callback prints.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "engine/graph/graph.h"

namespace vkp::graph {

// Collections by key, as they were when backed up.
using CollectionBackup = std::map<std::string, std::vector<Tensor>>;

// A copy of the collections named by `keys` (empty: every collection); a key the graph
// lacks is kept as an empty collection, so that restoring removes what was added since.
CollectionBackup backup_collection(const Graph& graph, const std::vector<std::string>& keys = {});
// Sets each collection of `backup` back to its copy.
void restore_collection(Graph& graph, const CollectionBackup& backup);

// tensorpack's freeze_collection: what the code inside adds to the collections named by
// `keys` is dropped when the guard goes (a tower built for inference leaves no update
// ops or regularization losses behind).
class FreezeCollection {
 public:
  FreezeCollection(Graph& graph, const std::vector<std::string>& keys);
  ~FreezeCollection();
  FreezeCollection(const FreezeCollection&) = delete;
  FreezeCollection& operator=(const FreezeCollection&) = delete;

 private:
  Graph& graph_;
  CollectionBackup backup_;
};

// Whether computing `targets` computes `t` (t is one of them or an input of theirs,
// however far back). tensorpack's dependency_of_targets; its dependency_of_fetches is the
// same question about what a step fetches.
bool dependency_of_targets(const std::vector<Tensor>& targets, const Tensor& t);

// The collection of print_stat's tensors: f32 [2], a tensor's mean and root mean square,
// named "print_stat/<message>" (under the scopes around the call).
inline constexpr const char* kPrintStats = "print_stats";
// tensorpack's print_stat: returns x, and has the trainer log x's mean and root mean
// square after every step ("<message>: mean ..., rms ..."; callbacks::PrintStats, which
// the trainer adds whenever the collection holds something). Trainers of several towers
// print the first tower's. Inside an inference tower (TowerContext with is_training
// false) it registers nothing.
Tensor print_stat(Tensor x, const std::string& message);

}  // namespace vkp::graph
