// Data-parallel trainers over several Vulkan devices (tensorpack's multi-GPU trainers):
// each device runs a tower on its own batch and towers::Towers reduces the gradients.
// Changing trainers is a one-line change:
//
//   vkp::train::SimpleTrainer trainer(device);
//   vkp::train::SyncMultiDeviceTrainerReplicated trainer(instance, {0, 1});
//
// Devices are `vkpack devices` indices; an index may repeat (each entry opens its own
// VkDevice), which is how several towers run on one GPU or on lavapipe. The batch of a
// step is one batch per tower from the input source. Callbacks see tower 0: its graph,
// its session (checkpoints, hyperparameters), its values of their fetches. Variables
// are broadcast from tower 0 at the start of every epoch, so what a callback or a
// restore wrote there reaches every tower and BatchNorm averages cannot drift.
//
// The parameter server's host master (ParameterServerOptions::master) follows the same
// rule, so that checkpoints and callbacks keep working through tower 0:
//   - it is loaded from tower 0 at the start of every epoch, after the broadcast: a
//     restore (session_init, AutoResumeTrainConfig) or a callback's set_variable made
//     before then is trained on; one made mid-epoch is overwritten by the next step;
//   - tower 0 receives the parameters every step, and the optimizer slots in
//     sync_state(): at every epoch end (before after_epoch), when training ends without
//     an error, and whenever a ModelSaver saves (also mid-epoch, under PeriodicTrigger).
//     A callback reads variables through TrainerView::variable (the master's value where
//     it holds one) or variable_values (synced first), never a stale slot.
#pragma once

#include <memory>
#include <vector>

#include "vkpack/engine/vk/device.h"
#include "vkpack/towers/towers.h"
#include "vkpack/train/tower_trainer.h"

namespace vkp::vk {
class Instance;
}

namespace vkp::train {

// How SyncMultiDeviceTrainerParameterServer keeps its master (see above).
struct ParameterServerOptions {
  towers::Master master = towers::Master::host;
};

// The options of each device: one set for all, or one per entry of the device list, so
// that one run can mix memory modes and limits profiles (towers that look like
// different vendors' GPUs).
struct PerDeviceOptions {
  PerDeviceOptions() = default;
  // Implicit, so that a single vk::DeviceOptions still reads as one for all.
  PerDeviceOptions(vk::DeviceOptions all) : each{std::move(all)} {}
  PerDeviceOptions(std::vector<vk::DeviceOptions> per_device) : each(std::move(per_device)) {}
  // Options for entry i of `count` devices; Error(invalid_argument) when there are
  // neither one nor `count` sets.
  vk::DeviceOptions for_device(std::size_t i, std::size_t count) const;
  std::vector<vk::DeviceOptions> each;  // empty: defaults for all
};

namespace detail {
// Opened before the Trainer base, which needs the first device.
struct OpenedDevices {
  OpenedDevices(const vk::Instance& instance, const std::vector<int>& indices, const PerDeviceOptions& options);
  std::vector<std::unique_ptr<vk::Device>> opened;
};
}  // namespace detail

class MultiDeviceTrainer : private detail::OpenedDevices, public TowerTrainer {
 public:
  MultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& devices, towers::Reduction reduction,
                     std::uint64_t seed = 0, PerDeviceOptions device_options = {}, float async_scale = 1.0f,
                     ParameterServerOptions parameter_server = {});
  ~MultiDeviceTrainer() override;

  void setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                   OptimizerFn optimizer) override;
  void run_step() override;

  // A predictor per tower after copying tower 0's variables to every tower.
  std::vector<callbacks::PredictFn> tower_predictors(const std::vector<std::string>& input_names,
                                                     const std::vector<std::string>& output_names) override;

  graph::Graph& graph() override;
  graph::Session& session() override;
  // A trainable variable or slot from the host master when it holds one, without a sync.
  Array variable(const std::string& name) override;
  void sync_state() override;  // the host master's slots into tower 0, when they changed
  std::uint64_t device_memory_bytes() const override;
  std::uint64_t peak_device_memory_bytes() const override;
  int tower_count() const { return static_cast<int>(opened.size()); }
  std::int64_t batches_per_step() const override { return tower_count(); }
  // Exists once setup_graph has run.
  towers::Towers& towers();

 protected:
  // Every tower's session reads the trainer's global step.
  void share_global_step(const std::int64_t* counter) override {
    if (towers_) towers_->follow_global_step(counter);
  }

 private:
  towers::TowerOptions options_;
  bool slots_behind_ = false;  // the host master's slots changed since tower 0 got them
  std::unique_ptr<towers::Towers> towers_;
  std::vector<std::vector<Array>> batches_;
  std::vector<std::vector<Array>> staged_batches_;  // StagingInput: the next step's, already on the devices
  std::vector<Array> fetched_;
};

// Every device holds all variables and applies the averaged gradients.
class SyncMultiDeviceTrainerReplicated : public MultiDeviceTrainer {
 public:
  SyncMultiDeviceTrainerReplicated(const vk::Instance& instance, const std::vector<int>& devices,
                                   std::uint64_t seed = 0, PerDeviceOptions device_options = {})
      : MultiDeviceTrainer(instance, devices, towers::Reduction::replicated, seed, std::move(device_options)) {}
};

// One master copy of the variables and optimizer state, on the host by default (or on
// the first device), applies the averaged gradients; every tower receives the
// parameters every step.
class SyncMultiDeviceTrainerParameterServer : public MultiDeviceTrainer {
 public:
  SyncMultiDeviceTrainerParameterServer(const vk::Instance& instance, const std::vector<int>& devices,
                                        std::uint64_t seed = 0, PerDeviceOptions device_options = {},
                                        ParameterServerOptions options = {})
      : MultiDeviceTrainer(instance, devices, towers::Reduction::parameter_server, seed, std::move(device_options),
                           1.0f, options) {}
};

// Each tower's gradients, times `scale`, are applied to the master in turn, unaveraged.
// In lock step: every tower computes from the same parameters and a step waits for all
// of them; tensorpack's free-running asynchronous updates (each tower on the parameters
// it last received) are not built yet.
class AsyncMultiDeviceTrainer : public MultiDeviceTrainer {
 public:
  AsyncMultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& devices, std::uint64_t seed = 0,
                          float scale = 1.0f, PerDeviceOptions device_options = {})
      : MultiDeviceTrainer(instance, devices, towers::Reduction::async, seed, std::move(device_options), scale) {}
};

}  // namespace vkp::train
