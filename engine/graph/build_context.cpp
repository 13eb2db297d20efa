#include "engine/graph/build_context.h"

namespace vkp::graph {

void BuildContext::push_scope(std::string name, Reuse reuse, bool names_ops, bool names_variables) {
  scopes_.push_back({std::move(name), reuse, names_ops, names_variables});
}

void BuildContext::pop_scope() { scopes_.pop_back(); }

std::string BuildContext::op_prefix() const {
  std::string prefix;
  for (const Scope& s : scopes_)
    if (s.names_ops && !s.name.empty()) prefix += s.name + "/";
  return prefix;
}

std::string BuildContext::variable_prefix() const {
  std::string prefix;
  for (const Scope& s : scopes_)
    if (s.names_variables && !s.name.empty()) prefix += s.name + "/";
  return prefix;
}

Reuse BuildContext::reuse_mode() const {
  for (auto it = scopes_.rbegin(); it != scopes_.rend(); ++it)
    if (it->reuse != Reuse::inherit) return it->reuse;
  return Reuse::no;
}

bool BuildContext::reuse() const { return reuse_mode() == Reuse::yes; }

}  // namespace vkp::graph
