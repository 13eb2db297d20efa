#include "towers/internal/host_master.h"

#include <algorithm>

#include "core/error.h"
#include "engine/graph/optimizer_table.h"
#include "towers/internal/replicas.h"

namespace vkp::towers {

HostMaster::HostMaster(Replicas& replicas) : replicas_(replicas) {
  for (const std::string& name : replicas_.names()) {
    const graph::Tensor v = replicas_.graph(0).find_variable(name);
    if (v.type().dtype != DType::f32)
      throw Error(ErrorCode::unsupported, "Towers: the host master updates float32 variables; " + name + " is " +
                                              graph::to_string(v.type()) + " (use TowerOptions::master = device)");
    slot_names_.push_back(graph::optimizer_slot_names(replicas_.optimizer_kind(), name));
    for (const std::string& slot : slot_names_.back())
      if (!replicas_.graph(0).find_variable(slot).valid())
        throw Error(ErrorCode::invalid_argument, "Towers: the optimizer made no slot variable " + slot +
                                                     " in tower 0, where the host master expects it");
  }
  load();
}

void HostMaster::load() {
  const std::vector<std::string>& names = replicas_.names();
  values_.resize(names.size());
  slots_.resize(names.size());
  std::vector<std::string> wanted;
  for (std::size_t i = 0; i < names.size(); ++i) {
    wanted.push_back(names[i]);
    wanted.insert(wanted.end(), slot_names_[i].begin(), slot_names_[i].end());
  }
  std::vector<Array> values;
  on_tower(0, [&] { values = replicas_.session(0).variable_values(wanted); });
  std::size_t next = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    values_[i] = std::move(values[next++]);
    slots_[i].clear();
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j) slots_[i].push_back(std::move(values[next++]));
  }
}

void HostMaster::store_slots() {
  std::vector<std::string> names;
  std::vector<Array> values;
  for (std::size_t i = 0; i < slot_names_.size(); ++i)
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j) {
      names.push_back(slot_names_[i][j]);
      values.push_back(slots_[i][j]);
    }
  on_tower(0, [&] { replicas_.session(0).set_variables(names, values); });
}

bool HostMaster::holds(const std::string& name) const {
  const std::vector<std::string>& names = replicas_.names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name || std::find(slot_names_[i].begin(), slot_names_[i].end(), name) != slot_names_[i].end())
      return true;
  return false;
}

const Array& HostMaster::value(const std::string& name) const {
  const std::vector<std::string>& names = replicas_.names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return values_[i];
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j)
      if (slot_names_[i][j] == name) return slots_[i][j];
  }
  throw Error(ErrorCode::not_found, "Towers::master_value: the host master holds no variable named " + name);
}

HostOptimizerStep HostMaster::read_step(std::uint64_t global_step) {
  return read_host_optimizer_step(replicas_.session(0), replicas_.optimizer_kind(), global_step);
}

void HostMaster::apply(std::span<const int> variables, const HostOptimizerStep& step,
                       std::span<const Array> gradients) {
  for (int v : variables) {
    const auto i = static_cast<std::size_t>(v);
    std::vector<Array>& slots = slots_[i];
    apply_host_optimizer(step, values_[i].data<float>().data(), gradients[i].data<float>().data(),
                         slots.empty() ? nullptr : slots[0].data<float>().data(),
                         slots.size() < 2 ? nullptr : slots[1].data<float>().data(), values_[i].shape().numel());
  }
}

}  // namespace vkp::towers
