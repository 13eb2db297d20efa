#include "train/towers_state.h"

#include "core/error.h"
#include "engine/vk/device.h"
#include "towers/async_towers.h"
#include "towers/host_master.h"

namespace vkp::train {

towers::Towers& TowersState::towers() {
  if (!towers_) throw Error(ErrorCode::invalid_argument, "the towers exist once setup_graph has run");
  return *towers_;
}

void TowersState::drain() {
  if (async_) static_cast<towers::AsyncTowers&>(towers()).drain();
}

graph::Session& TowersState::session() {
  drain();
  return towers().session(0);
}

Array TowersState::variable(const std::string& name) {
  if (async_) sync();
  if (const towers::HostMaster* master = towers().host_master(); master && master->holds(name))
    return master->value(name);
  return session().variable(name);
}

std::vector<Array> TowersState::variable_values(const std::vector<std::string>& names) {
  sync();
  return session().variable_values(names);
}

std::uint64_t TowersState::device_memory_bytes() const {
  std::uint64_t total = 0;
  for (const vk::Device* d : devices_) total += d->memory().allocated_bytes();
  return total;
}

std::uint64_t TowersState::peak_device_memory_bytes() const {
  std::uint64_t total = 0;
  for (const vk::Device* d : devices_) total += d->memory().peak_bytes();
  return total;
}

std::vector<callbacks::StepProgram> TowersState::step_programs() const {
  std::vector<callbacks::StepProgram> all;
  if (!towers_ || async_) return all;
  for (int k = 0; k < towers_->size(); ++k)
    for (const graph::Program* p : towers_->session(k).programs()) all.push_back({p, &towers_->session(k).device()});
  return all;
}

void TowersState::sync() {
  if (towers_) drain();  // tower 0's slots too
  if (!slots_behind_) return;
  // Behind only after a step of towers with a host master.
  if (towers::HostMaster* master = towers().host_master()) master->store_slots();
  slots_behind_ = false;
}

void TowersState::follow_global_step(std::shared_ptr<const graph::StepClock> clock) {
  if (!towers_) return;
  const bool ends = clock == nullptr;
  towers_->follow_global_step(std::move(clock));
  if (ends && async_) static_cast<towers::AsyncTowers&>(*towers_).abandon();
}

bool TowersState::set_timestamps(bool on) {
  if (on && async_)
    throw Error(ErrorCode::unsupported,
                "async towers run their programs on threads of their own: profile them with a "
                "synchronous trainer");
  if (!towers_) {
    if (on) towers();  // throws: nothing to time yet
    return false;
  }
  if (towers_->session(0).timestamps() == on) return false;  // the programs held are already so
  towers_->set_timestamps(on);
  return true;
}

}  // namespace vkp::train
