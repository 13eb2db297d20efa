// The device copies of a graph's variables (and the scalar buffer of the session):
// allocated once, initialized from their initializers, read and written as Arrays.
#pragma once

#include <map>
#include <memory>
#include <string>

#include "vkpack/core/array.h"
#include "vkpack/engine/graph/graph.h"
#include "vkpack/engine/vk/memory.h"

namespace vkp::graph {

class VariableStore {
 public:
  VariableStore(vk::Device& device, std::uint64_t seed);

  // The storage of a variable node, allocated and initialized on first use.
  const vk::BufferSlice& storage(const Node& variable);
  bool contains(const std::string& name) const { return slots_.count(name) > 0; }
  // By variable name; Error(not_found) naming it when it has no storage yet.
  Array read(const std::string& name) const;
  // Error(invalid_argument) when the shape or dtype differs from the variable's.
  void write(const std::string& name, const Array& value);
  // Names of the variables with storage, sorted.
  std::vector<std::string> names() const;

 private:
  struct Slot {
    vk::BufferSlice slice;
    TensorType type;
  };
  const Slot& slot(const std::string& name) const;

  vk::Device* device_;
  std::uint64_t seed_;
  vk::Arena arena_;
  std::map<std::string, Slot> slots_;
};

}  // namespace vkp::graph
