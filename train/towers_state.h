// TowersState: the model of a multi-device trainer (train/multi_device_trainer.h), held
// by its towers. Callbacks see tower 0: its graph, its session, its values; a host
// master answers for the variables it holds, and its optimizer slots reach tower 0 in
// sync(). Async towers are drained first (every fed batch applied), so that whoever
// reads tower 0 does not race their threads.
#pragma once

#include <memory>
#include <vector>

#include "towers/towers.h"
#include "train/trainer_state.h"

namespace vkp::train {

class TowersState final : public TrainerState {
 public:
  // `devices`: every tower's, for the memory they hold; `async`: the towers run free.
  TowersState(std::vector<const vk::Device*> devices, bool async) : devices_(std::move(devices)), async_(async) {}
  // Set by the trainer's setup_graph; until then what needs the towers throws.
  void set_towers(std::unique_ptr<towers::Towers> towers) { towers_ = std::move(towers); }
  bool has_towers() const { return towers_ != nullptr; }
  towers::Towers& towers();
  // Async towers: waits until every fed batch is applied (nothing for synchronous ones).
  void drain();
  // The host master's optimizer slots changed (a step) or reached tower 0 (a load).
  void set_slots_behind(bool behind) { slots_behind_ = behind; }

  graph::Graph& graph() override { return towers().graph(0); }
  graph::Session& session() override;
  float hyperparameter(const std::string& name) override { return towers().hyperparameter(name); }
  void set_hyperparameter(const std::string& name, float value) override { towers().set_hyperparameter(name, value); }
  // A trainable variable or slot from the host master when it holds one, without a sync.
  Array variable(const std::string& name) override;
  std::vector<Array> variable_values(const std::vector<std::string>& names) override;
  void run_targets(const std::vector<graph::Tensor>& targets) override { session().run({}, {}, targets); }
  std::uint64_t device_memory_bytes() const override;
  std::uint64_t peak_device_memory_bytes() const override;
  // Every tower's programs, each on its device; none for async towers, whose threads run
  // programs while a profiler would read them.
  std::vector<callbacks::StepProgram> step_programs() const override;
  // The host master's slots into tower 0, when they changed; async towers drained first.
  void sync() override;
  // At the end of training (nullptr) async towers drop what they were not given time to
  // apply (after an error).
  void follow_global_step(std::shared_ptr<const graph::StepClock> clock) override;
  // Error(unsupported) for async towers.
  bool set_timestamps(bool on) override;

 private:
  std::vector<const vk::Device*> devices_;
  bool async_;
  bool slots_behind_ = false;
  std::unique_ptr<towers::Towers> towers_;
};

}  // namespace vkp::train
