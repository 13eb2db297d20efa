#include "towers/host_master.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "engine/graph/optimizer_table.h"
#include "towers/host_average.h"
#include "towers/internal/replicas.h"

namespace vkp::towers {
namespace {

bool all_finite(std::span<const float> values) {
  for (float x : values)
    if (!std::isfinite(x)) return false;
  return true;
}

}  // namespace

HostMaster::HostMaster(Replicas& replicas, std::optional<graph::LossScaleOptions> loss_scale)
    : replicas_(replicas), loss_scale_(std::move(loss_scale)) {
  for (const graph::Tensor& v : replicas_.at(0).sent)
    sent_names_.push_back(std::get<graph::VariableAttrs>(v.node().attrs).var_name);
  for (const std::string& name : replicas_.layout().names()) {
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
  const std::vector<std::string>& names = replicas_.layout().names();
  values_.resize(sent_names_.size());
  slots_.resize(names.size());
  std::vector<std::string> wanted;
  for (std::size_t i = 0; i < names.size(); ++i) {
    wanted.push_back(names[i]);
    wanted.insert(wanted.end(), slot_names_[i].begin(), slot_names_[i].end());
  }
  wanted.insert(wanted.end(), sent_names_.begin() + static_cast<std::ptrdiff_t>(names.size()), sent_names_.end());
  std::vector<Array> values;
  on_tower(0, [&] { values = replicas_.session(0).variable_values(wanted); });
  std::size_t next = 0;
  for (std::size_t i = 0; i < names.size(); ++i) {
    values_[i] = std::move(values[next++]);
    slots_[i].clear();
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j) slots_[i].push_back(std::move(values[next++]));
  }
  for (std::size_t i = names.size(); i < sent_names_.size(); ++i) values_[i] = std::move(values[next++]);
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
  if (std::find(sent_names_.begin(), sent_names_.end(), name) != sent_names_.end()) return true;
  const std::vector<std::string>& names = replicas_.layout().names();
  for (std::size_t i = 0; i < names.size(); ++i)
    if (names[i] == name || std::find(slot_names_[i].begin(), slot_names_[i].end(), name) != slot_names_[i].end())
      return true;
  return false;
}

const Array& HostMaster::value(const std::string& name) const {
  const auto sent = std::find(sent_names_.begin(), sent_names_.end(), name);
  if (sent != sent_names_.end()) return values_[static_cast<std::size_t>(sent - sent_names_.begin())];
  const std::vector<std::string>& names = replicas_.layout().names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    for (std::size_t j = 0; j < slot_names_[i].size(); ++j)
      if (slot_names_[i][j] == name) return slots_[i][j];
  }
  throw Error(ErrorCode::not_found, "HostMaster::value: the host master holds no variable named " + name);
}

HostOptimizerStep HostMaster::read_step(std::uint64_t global_step) {
  return read_host_optimizer_step(replicas_.session(0), replicas_.optimizer_kind(), global_step);
}

bool HostMaster::apply(int objective, std::span<const int> variables, const HostOptimizerStep& step,
                       std::span<Array> gradients) {
  if (loss_scale_) {
    bool finite = true;
    for (int v : variables) finite = finite && all_finite(gradients[static_cast<std::size_t>(v)].data<float>());
    const float scale =
        values_[replicas_.layout().names().size() + 3 * static_cast<std::size_t>(objective)].data<float>()[0];
    move_scale(objective, !finite);
    if (!finite) return false;
    // As the device's guarded update: g * (1 / scale), exact for the powers of two a
    // scale takes.
    multiply(gradients, variables, 1.0f / scale);
  }
  for (int v : variables) {
    const auto i = static_cast<std::size_t>(v);
    std::vector<Array>& slots = slots_[i];
    apply_host_optimizer(step, values_[i].data<float>().data(), gradients[i].data<float>().data(),
                         slots.empty() ? nullptr : slots[0].data<float>().data(),
                         slots.size() < 2 ? nullptr : slots[1].data<float>().data(), values_[i].shape().numel());
  }
  return true;
}

// graph/loss_scale.h's rule: after an overflow the scale halves (to no less than 1), good
// steps restart and skipped steps count one more; otherwise good steps count one more
// and, on reaching the growth interval, restart as the scale doubles (to at most the
// maximum).
void HostMaster::move_scale(int objective, bool overflow) {
  const std::size_t at = replicas_.layout().names().size() + 3 * static_cast<std::size_t>(objective);
  float& scale = values_[at].data<float>()[0];
  float& good = values_[at + 1].data<float>()[0];
  float& skipped = values_[at + 2].data<float>()[0];
  const graph::LossScaleOptions& o = *loss_scale_;
  if (overflow) {
    scale = std::clamp(scale * 0.5f, 1.0f, o.max_scale);
    good = 0;
    skipped += 1;
    return;
  }
  good += 1;
  if (good >= static_cast<float>(o.growth_interval)) {
    scale = std::clamp(scale * 2.0f, 1.0f, o.max_scale);
    good = 0;
  }
}

}  // namespace vkp::towers
