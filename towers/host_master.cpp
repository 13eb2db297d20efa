// Towers' host master (parameter_server with Master::host): its setup from tower 0's
// variables and slots, loading and storing it, and lookups by name.
#include <algorithm>

#include "core/error.h"
#include "engine/graph/optimizer_table.h"
#include "towers/internal/tower_state.h"
#include "towers/towers.h"

namespace vkp::towers {

using detail::on_tower;

// The host master's slot names, checked against tower 0's slot variables, then its values.
void Towers::set_up_host_master() {
  for (const std::string& name : names_) {
    const graph::Tensor v = graph(0).find_variable(name);
    if (v.type().dtype != DType::f32)
      throw Error(ErrorCode::unsupported, "Towers: the host master updates float32 variables; " + name + " is " +
                                              graph::to_string(v.type()) + " (use TowerOptions::master = device)");
    slot_names_.push_back(graph::optimizer_slot_names(kind_, name));
    for (const std::string& slot : slot_names_.back())
      if (!graph(0).find_variable(slot).valid())
        throw Error(ErrorCode::invalid_argument, "Towers: the optimizer made no slot variable " + slot +
                                                     " in tower 0, where the host master expects it");
  }
  load_master();
}

bool Towers::host_master() const {
  return options_.reduction == Reduction::async ||
         (options_.reduction == Reduction::parameter_server && options_.master == Master::host);
}

void Towers::check_host_master(const char* what) const {
  if (!host_master())
    throw Error(ErrorCode::invalid_argument, std::string("Towers::") + what + ": these towers keep no host master (" +
                                                 to_string(options_.reduction) + " reduction" +
                                                 (options_.reduction == Reduction::parameter_server
                                                      ? ", master on the device)"
                                                      : ")"));
}

void Towers::load_master() {
  check_host_master("load_master");
  master_.resize(names_.size());
  master_slots_.resize(names_.size());
  std::vector<std::string> wanted;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    wanted.push_back(names_[i]);
    wanted.insert(wanted.end(), slot_names_[i].begin(), slot_names_[i].end());
  }
  std::vector<Array> values;
  on_tower(0, [&] { values = session(0).variable_values(wanted); });
  std::size_t next = 0;
  for (std::size_t i = 0; i < names_.size(); ++i) {
    master_[i] = std::move(values[next++]);
    master_slots_[i].clear();
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j) master_slots_[i].push_back(std::move(values[next++]));
  }
}

void Towers::store_master_slots() {
  check_host_master("store_master_slots");
  std::vector<std::string> slots;
  std::vector<Array> values;
  for (std::size_t i = 0; i < names_.size(); ++i)
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j) {
      slots.push_back(slot_names_[i][j]);
      values.push_back(master_slots_[i][j]);
    }
  on_tower(0, [&] { session(0).set_variables(slots, values); });
}

bool Towers::master_holds(const std::string& name) const {
  if (!host_master()) return false;
  for (std::size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name || std::find(slot_names_[i].begin(), slot_names_[i].end(), name) != slot_names_[i].end())
      return true;
  return false;
}

const Array& Towers::master_value(const std::string& name) const {
  check_host_master("master_value");
  for (std::size_t i = 0; i < names_.size(); ++i) {
    if (names_[i] == name) return master_[i];
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j)
      if (slot_names_[i][j] == name) return master_slots_[i][j];
  }
  throw Error(ErrorCode::not_found, "Towers::master_value: the host master holds no variable named " + name);
}

}  // namespace vkp::towers
