// The device copies of a graph's variables: each allocated on first use, initialized
// from its initializer (seeded by the graph's seed), read and written as Arrays.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/vk/memory.h"
#include "engine/vk/transfer.h"

namespace vkp::graph {

class VariableStore {
 public:
  VariableStore(const Graph& graph, vk::Device& device);

  // The storage of a variable node, allocated on first use. Its initial value is
  // computed then and uploaded by the next upload_initial_values(), read or write
  // (programs do it once when compiled), so that many variables cost one transfer.
  const vk::BufferSlice& storage(const Node& variable);
  bool contains(const std::string& name) const { return slots_.count(name) > 0; }
  // Adds the uploads of initial values not yet on the device to `batch`.
  void upload_initial_values(vk::TransferBatch& batch);
  // By variable name (its storage allocated if it has none yet); Error(not_found) naming
  // it when the graph has no such variable.
  Array read(const std::string& name);
  // Error(invalid_argument) when the shape or dtype differs from the variable's.
  void write(const std::string& name, const Array& value);
  // Several at once, in one transfer batch (one submission where memory is staged).
  std::vector<Array> read(const std::vector<std::string>& names);
  void write(const std::vector<std::string>& names, const std::vector<Array>& values);
  // Names of the variables with storage, sorted.
  std::vector<std::string> names() const;

 private:
  struct Slot {
    vk::BufferSlice slice;
    TensorType type;
  };
  // By name: the graph's variable, its storage allocated if it has none yet.
  const Slot& slot(const std::string& name);
  std::vector<const Slot*> slots_of(const std::vector<std::string>& names);

  vk::Device* device_;
  const Graph* graph_;
  vk::Arena arena_;
  std::map<std::string, Slot> slots_;
  std::vector<std::pair<vk::BufferSlice, Array>> initial_values_;  // not yet uploaded
};

}  // namespace vkp::graph
