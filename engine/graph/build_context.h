// BuildContext: what the code adding nodes to a Graph is inside. Name and variable
// scopes (VariableScope, NameScope: the prefixes of op and variable names, and the
// innermost reuse setting), the tower (TowerContext) and FreezeVariables' depth. The RAII
// guards of variables.h change it; Graph::add prefixes names with it; layers read the
// tower and whether they are frozen.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkp::graph {

enum class Reuse : std::uint8_t {
  inherit,    // as the enclosing scope (no at the top)
  no,         // get_variable creates; an existing name is an error
  yes,        // get_variable returns an existing variable; a new name is an error
  automatic,  // either
};

struct TowerInfo {
  std::string name;  // "tower0"; empty outside towers
  int index = 0;
  bool is_training = true;
};

class BuildContext {
 public:
  void push_scope(std::string name, Reuse reuse, bool names_ops, bool names_variables);
  void pop_scope();
  std::string op_prefix() const;        // "tower0/conv0/"
  std::string variable_prefix() const;  // "conv0/"
  bool reuse() const;                   // the innermost explicit reuse setting is yes
  Reuse reuse_mode() const;             // the innermost explicit reuse setting (no at the top)
  void set_tower(TowerInfo info) { tower_ = std::move(info); }
  const TowerInfo& tower() const { return tower_; }
  // Inside FreezeVariables: variables made are not trainable.
  void set_frozen(int depth) { frozen_ = depth; }
  int frozen_depth() const { return frozen_; }
  bool frozen() const { return frozen_ > 0; }

 private:
  struct Scope {
    std::string name;
    Reuse reuse;
    bool names_ops, names_variables;
  };
  std::vector<Scope> scopes_;
  TowerInfo tower_;
  int frozen_ = 0;
};

}  // namespace vkp::graph
