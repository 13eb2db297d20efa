#include "engine/graph/variables.h"

#include "core/error.h"
#include "engine/graph/ops.h"

namespace vkp::graph {

Tensor get_variable(Graph& graph, const std::string& name, std::vector<std::int64_t> dims, Initializer init,
                    bool trainable) {
  const std::string full = graph.context().variable_prefix() + name;
  const Reuse reuse = graph.context().reuse_mode();
  if (Tensor existing = graph.find_variable(full); existing.valid()) {
    if (reuse == Reuse::no)
      throw Error(ErrorCode::invalid_argument, "variable " + full + " already exists; to share it, get it inside a "
                                                                    "VariableScope with Reuse::yes or Reuse::automatic");
    if (existing.dims() != dims)
      throw Error(ErrorCode::invalid_argument, "variable " + full + " exists with shape " +
                                                   dims_string(existing.dims()) + ", requested " + dims_string(dims));
    if (graph.frozen() && std::get<VariableAttrs>(existing.node().attrs).trainable) return stop_gradient(existing);
    return existing;
  }
  if (reuse == Reuse::yes)
    throw Error(ErrorCode::not_found, "variable " + full + " does not exist, and its scope only reuses; create it "
                                                           "first or use Reuse::automatic");
  for (std::int64_t d : dims)
    if (d < 0) throw Error(ErrorCode::invalid_argument, "variable " + full + " needs a known shape, got " + dims_string(dims));
  // Variables are named without the tower prefix of op names.
  const bool trains = trainable && !graph.frozen();
  const Tensor v = graph.add(OpKind::variable, {}, VariableAttrs{full, f32(std::move(dims)), init, trains},
                             full.substr(full.rfind('/') + 1));
  graph.register_variable(v);
  return v;
}

VariableScope::VariableScope(Graph& graph, std::string name, Reuse reuse) : graph_(graph) {
  graph.context().push_scope(std::move(name), reuse, /*names_ops=*/true, /*names_variables=*/true);
}

NameScope::NameScope(Graph& graph, std::string name) : graph_(graph) {
  graph.context().push_scope(std::move(name), Reuse::inherit, /*names_ops=*/true, /*names_variables=*/false);
}

TowerContext::TowerContext(Graph& graph, std::string name, int index, bool is_training)
    : graph_(graph), saved_(graph.tower()) {
  graph.context().push_scope(name, Reuse::inherit, /*names_ops=*/true, /*names_variables=*/false);
  graph.context().set_tower({std::move(name), index, is_training});
}

TowerContext::~TowerContext() {
  graph_.context().pop_scope();
  graph_.context().set_tower(saved_);
}

}  // namespace vkp::graph
