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
//   - tower 0 receives the parameters every step, and the optimizer slots when its state
//     syncs (TowersState::sync): at every epoch end (before after_epoch), when training
//     ends without an error, and whenever a ModelSaver saves (also mid-epoch, under
//     PeriodicTrigger).
//     A callback reads variables through TrainerView::variable (the master's value where
//     it holds one) or variable_values (synced first), never a stale slot.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "engine/vk/device.h"
#include "towers/async_towers.h"
#include "towers/sync_towers.h"
#include "towers/towers.h"
#include "train/batch_split.h"
#include "train/batch_splitter.h"
#include "train/tower_trainer.h"
#include "train/towers_state.h"

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
  std::vector<vk::Device*> device_list() const;
  std::vector<std::unique_ptr<vk::Device>> opened;
};
}  // namespace detail

class MultiDeviceTrainer : private detail::OpenedDevices, public TowerTrainer {
 public:
  // `tower_options`: the strategy and its settings (reduction, seed, master, async_scale,
  // async_max_lead); the trainer sets staging, timing and loss scaling itself.
  MultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& devices, towers::TowerOptions tower_options,
                     PerDeviceOptions device_options = {});
  ~MultiDeviceTrainer() override;

  void setup_graph(const std::vector<InputSpec>& inputs, InputSourcePtr source, TowerFn tower,
                   OptimizerFn optimizer) override;
  void run_step() override;
  // Mixed precision on every tower (towers::TowerOptions::loss_scale): the skip decided
  // on the averaged gradients (each gradient with async towers), the same in every tower;
  // a host master keeps the scale itself (towers::TowerOptions::loss_scale).
  void enable_mixed_precision(const graph::LossScaleOptions& options = {}) override;

  // A predictor per tower after copying tower 0's variables to every tower.
  std::vector<callbacks::PredictFn> tower_predictors(const std::vector<std::string>& input_names,
                                                     const std::vector<std::string>& output_names) override;

  callbacks::PredictFn predictor(const std::vector<std::string>& input_names,
                                 const std::vector<std::string>& output_names) override;
  int tower_count() const { return static_cast<int>(opened.size()); }
  std::int64_t batches_per_step() const override { return tower_count(); }
  // Exist once setup_graph has run: the towers, and the same as the synchronous or the
  // asynchronous strategy they are (Error(invalid_argument) for the other).
  towers::Towers& towers() { return towers_->towers(); }
  towers::SyncTowers& sync_towers();
  towers::AsyncTowers& async_towers();

  // How each synchronous step's global batch is shared between the towers (batch_split.h);
  // before training starts. With BatchSplit::by_throughput every epoch logs each tower's
  // samples per second, its modelled step (fixed cost and cost per row) and the shares of
  // the next epoch, and records the rates and shares in the monitors
  // (towers/tower<k>/samples_per_second, towers/tower<k>/share); a resumed run starts
  // from the shares recorded last. Error(unsupported) for async towers, which
  // share the batches by speed already (a free tower takes the next one);
  // Error(invalid_argument) for fixed shares that are not one per tower.
  void set_batch_split(BatchSplit split);
  // The shares in use (equal ones unless set otherwise) and the rows each tower took in
  // the last step.
  const std::vector<double>& batch_shares() const { return splitter_.shares(); }
  const std::vector<std::int64_t>& last_rows() const { return splitter_.rows(); }

 protected:
  // Async: each tower's updates and gradient staleness in the log and the monitors.
  void report_epoch() override;
  // Tower k: placeholders of the input specs and the tower function's cost. A trainer of
  // several objectives (a GAN's) adds them here.
  virtual towers::Tower build_tower(graph::Graph& graph, int k);
  // A synchronous step of the towers on `batches` (`next`: the following step's, to
  // stage, or empty); the callbacks' fetches land in `fetched`. Returns the step's cost.
  virtual double step_towers(std::span<const std::vector<Array>> batches, std::span<const std::vector<Array>> next,
                             std::vector<Array>& fetched);
  const towers::TowerOptions& tower_options() const { return options_; }

 private:
  bool is_async() const { return options_.reduction == towers::Reduction::async; }
  void run_async_step();
  // For async towers: a predictor that drains them before every call.
  callbacks::PredictFn draining(callbacks::PredictFn fn);

  towers::TowerOptions options_;
  TowersState* towers_;  // the trainer's state()
  std::vector<std::vector<Array>> batches_;
  std::vector<std::vector<Array>> staged_batches_;  // StagingInput: the next step's, already on the devices
  std::vector<Array> fetched_;
  BatchSplitter splitter_;
};

// Every device holds all variables and applies the averaged gradients.
class SyncMultiDeviceTrainerReplicated : public MultiDeviceTrainer {
 public:
  SyncMultiDeviceTrainerReplicated(const vk::Instance& instance, const std::vector<int>& devices,
                                   std::uint64_t seed = 0, PerDeviceOptions device_options = {})
      : MultiDeviceTrainer(instance, devices, {.reduction = towers::Reduction::replicated, .seed = seed},
                           std::move(device_options)) {}
};

// One master copy of the variables and optimizer state, on the host by default (or on
// the first device), applies the averaged gradients; every tower receives the
// parameters every step.
class SyncMultiDeviceTrainerParameterServer : public MultiDeviceTrainer {
 public:
  SyncMultiDeviceTrainerParameterServer(const vk::Instance& instance, const std::vector<int>& devices,
                                        std::uint64_t seed = 0, PerDeviceOptions device_options = {},
                                        ParameterServerOptions options = {})
      : MultiDeviceTrainer(instance, devices,
                           {.reduction = towers::Reduction::parameter_server, .seed = seed, .master = options.master},
                           std::move(device_options)) {}
};

// Towers that run free (tensorpack's AsyncMultiGPUTrainer): each on a thread of its own
// computes on the parameters it last received, and its gradient, times `scale`, is
// applied to a master on the host as soon as it is ready, unaveraged, without waiting
// for the other towers. A step gives one batch per tower to whichever tower is free
// next (a fast tower takes more of them) and waits only while towers() batches wait
// already; its cost is that of the updates applied since the last step, its fetches the
// latest update's values (from the tower that made it). Every batch of an epoch is
// applied before the epoch ends, and the global step counts tower_count() updates, so
// that Adam's bias correction and a resume go on from global step x towers.
// `max_lead` >= 0 bounds staleness (TowerOptions::async_max_lead). Each epoch logs every
// tower's updates and gradient staleness and puts them in the monitors
// (async/tower<k>/updates, async/tower<k>/staleness_mean, async/tower<k>/staleness_max).
class AsyncMultiDeviceTrainer : public MultiDeviceTrainer {
 public:
  AsyncMultiDeviceTrainer(const vk::Instance& instance, const std::vector<int>& devices, std::uint64_t seed = 0,
                          float scale = 1.0f, PerDeviceOptions device_options = {}, int max_lead = -1);
};

}  // namespace vkp::train
