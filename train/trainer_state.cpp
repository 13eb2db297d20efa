#include "train/trainer_state.h"

#include "engine/vk/device.h"

namespace vkp::train {

graph::Graph& SessionState::graph() {
  if (!graph_) graph_ = std::make_unique<graph::Graph>(seed_);
  return *graph_;
}

graph::Session& SessionState::session() {
  if (!session_) session_ = std::make_unique<graph::Session>(graph(), *device_, options_);
  return *session_;
}

std::uint64_t SessionState::device_memory_bytes() const { return device_->memory().allocated_bytes(); }
std::uint64_t SessionState::peak_device_memory_bytes() const { return device_->memory().peak_bytes(); }

std::vector<callbacks::StepProgram> SessionState::step_programs() const {
  std::vector<callbacks::StepProgram> all;
  if (session_)
    for (const graph::Program* p : session_->programs()) all.push_back({p, device_});
  return all;
}

bool SessionState::set_timestamps(bool on) {
  if (options_.timestamps == on) return false;  // the programs held are already so
  options_.timestamps = on;
  if (session_) session_->set_timestamps(on);
  return true;
}

}  // namespace vkp::train
