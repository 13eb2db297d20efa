// The CPU reference: a host interpreter of the graph in double precision, the
// specification each op's kernels are tested against (and, through finite differences,
// each gradient rule).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"

namespace vkp::graph {

struct RefTensor {
  TensorType type;              // concrete
  std::vector<double> values;   // row-major; i32 values are exact in a double

  static RefTensor zeros(TensorType type);
  static RefTensor from(const Array& array);
  Array to_array() const;       // rounded to the type's dtype
};

// What a reference run reads and changes besides its feeds: variable values by name,
// and the scalar words (run counter, global step, hyperparameters).
struct RefState {
  std::map<std::string, RefTensor> variables;
  std::vector<double> scalars;
  std::uint64_t seed = 0;
  const Graph* graph = nullptr;  // set by evaluate_reference: ops that write variables look up their names

  // Variables from their initializers, hyperparameters from their initial values.
  static RefState initial(const Graph& graph);
};

// Computes `fetches`, and runs `targets` (side effects on state.variables) after
// everything else, as a compiled program does.
std::vector<RefTensor> evaluate_reference(const Graph& graph, const std::map<int, RefTensor>& feeds,
                                          const std::vector<Tensor>& fetches, const std::vector<Tensor>& targets,
                                          RefState& state);

}  // namespace vkp::graph
