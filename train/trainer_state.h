// TrainerState: where a trainer's model lives and runs (callbacks::ModelState, and what
// the trainer itself needs of it). A Trainer holds one: SessionState, one session on one
// device, unless a multi-device trainer puts its towers' in its place
// (train/towers_state.h). The loop (train/trainer.h) calls sync() at every epoch end and
// when training ends cleanly, and makes the sessions follow its global step while it runs.
#pragma once

#include <cstdint>
#include <memory>

#include "callbacks/model_state.h"
#include "engine/graph/session.h"
#include "engine/graph/step_clock.h"

namespace vkp::vk {
class Device;
}

namespace vkp::train {

class TrainerState : public callbacks::ModelState {
 public:
  // The session of the training graph (tower 0's with several towers).
  virtual graph::Session& session() = 0;
  // Brings session()'s variables and optimizer state up to date where the master copy
  // is kept elsewhere (the parameter server's host master).
  virtual void sync() {}
  // Makes the sessions that run the steps read `clock` (nullptr: they count their own
  // again, and whatever runs on threads of its own stops).
  virtual void follow_global_step(std::shared_ptr<const graph::StepClock> clock) = 0;
  // Whether programs compiled from now on are timed; returns whether that changed (the
  // programs held before are then stale). Error(unsupported) where they cannot be.
  virtual bool set_timestamps(bool on) = 0;
};

// One graph and its session on one device, each made on first use: a trainer holds no
// device memory for them before it needs them.
class SessionState final : public TrainerState {
 public:
  SessionState(vk::Device& device, std::uint64_t seed) : device_(&device), seed_(seed) {}
  // What the session is made with; set before first use (mixed precision's f16 storage).
  graph::SessionOptions& options() { return options_; }

  graph::Graph& graph() override;
  graph::Session& session() override;
  float hyperparameter(const std::string& name) override { return session().hyperparameter(name); }
  void set_hyperparameter(const std::string& name, float value) override { session().set_hyperparameter(name, value); }
  Array variable(const std::string& name) override { return session().variable(name); }
  std::vector<Array> variable_values(const std::vector<std::string>& names) override {
    return session().variable_values(names);
  }
  void run_targets(const std::vector<graph::Tensor>& targets) override { session().run({}, {}, targets); }
  std::uint64_t device_memory_bytes() const override;
  std::uint64_t peak_device_memory_bytes() const override;
  std::vector<callbacks::StepProgram> step_programs() const override;
  void follow_global_step(std::shared_ptr<const graph::StepClock> clock) override {
    session().follow_global_step(std::move(clock));
  }
  bool set_timestamps(bool on) override;

 private:
  vk::Device* device_;
  std::uint64_t seed_;
  graph::SessionOptions options_;
  std::unique_ptr<graph::Graph> graph_;  // declared before the session, which refers to it
  std::unique_ptr<graph::Session> session_;
};

}  // namespace vkp::train
