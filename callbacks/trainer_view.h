// TrainerView: all a callback sees of the trainer that runs it (docs/design.md section 7:
// callbacks know the trainer only through this narrow interface, which the trainers in
// train/ implement).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "callbacks/model_state.h"
#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/graph/step_clock.h"

namespace vkp::callbacks {

class Monitors;

// A callable on the inference tower: inputs in the order asked for, outputs likewise.
using PredictFn = std::function<std::vector<Array>(const std::vector<Array>& inputs)>;

// Where a training loop is, as tensorpack's TrainLoop counts it: epochs from 1,
// global_step = steps run so far (over every epoch, across resumes), local_step = steps
// run in this epoch. The trainer keeps it; callbacks read it through TrainerView.
struct TrainLoop {
  // The global step: the trainer advances it, its sessions read it (StepClock); a
  // callback reads it through TrainerView::global_step() and must not set it.
  std::shared_ptr<graph::StepClock> clock = std::make_shared<graph::StepClock>();
  int epoch_num = 0, starting_epoch = 1, max_epoch = 0;
  std::int64_t local_step = 0, steps_per_epoch = 0;
  // Steps of starting_epoch that ran before this run (a run resumed inside an epoch).
  std::int64_t starting_local_step = 0;

  // The local step the current epoch starts from in this run.
  std::int64_t first_local_step() const { return epoch_num == starting_epoch ? starting_local_step : 0; }
  // Whether the step about to run is the first this run trains in its epoch: local step
  // 0, or in a run resumed inside an epoch, starting_local_step.
  bool first_step_of_epoch() const { return local_step == first_local_step(); }
  bool last_step_of_epoch() const { return local_step == steps_per_epoch - 1; }
};

class TrainerView {
 public:
  virtual ~TrainerView() = default;

  // Progress (TrainLoop).
  virtual const TrainLoop& loop() const = 0;
  std::int64_t global_step() const { return loop().clock->now(); }
  int epoch_num() const { return loop().epoch_num; }
  std::int64_t local_step() const { return loop().local_step; }
  std::int64_t steps_per_epoch() const { return loop().steps_per_epoch; }
  int starting_epoch() const { return loop().starting_epoch; }
  int max_epoch() const { return loop().max_epoch; }

  // The model (ModelState): the graph, variables and hyperparameters, the programs and
  // device memory; the functions below forward to it.
  virtual ModelState& state() = 0;
  graph::Graph& graph() { return state().graph(); }
  float hyperparameter(const std::string& name) { return state().hyperparameter(name); }
  void set_hyperparameter(const std::string& name, float value) { state().set_hyperparameter(name, value); }
  Array variable(const std::string& name) { return state().variable(name); }
  std::vector<Array> variable_values(const std::vector<std::string>& names) { return state().variable_values(names); }
  void run_targets(const std::vector<graph::Tensor>& targets) { state().run_targets(targets); }
  std::uint64_t device_memory_bytes() { return state().device_memory_bytes(); }
  std::uint64_t peak_device_memory_bytes() { return state().peak_device_memory_bytes(); }
  std::vector<StepProgram> step_programs() { return state().step_programs(); }

  virtual Monitors& monitors() = 0;
  // train_log/<name>/, or empty when the run writes no files.
  virtual const std::string& logger_dir() const = 0;
  // The process that writes logs, statistics and checkpoints (rank 0 under MPI).
  virtual bool is_chief() const = 0;

  // The inference tower (BatchNorm moving averages, no dropout) on the training
  // variables, fed and fetched by tensor name as the tower function named them.
  // Error(unsupported) where the trainer has no tower function (a graph built by hand).
  virtual PredictFn predictor(const std::vector<std::string>& input_names,
                              const std::vector<std::string>& output_names);
  // One predictor per tower, each on its tower's device, all with tower 0's variables as
  // they are now (data-parallel inference). One tower: {predictor(...)}.
  virtual std::vector<PredictFn> tower_predictors(const std::vector<std::string>& input_names,
                                                  const std::vector<std::string>& output_names) {
    return {predictor(input_names, output_names)};
  }
  // Samples in one step (the batch over every tower).
  virtual std::int64_t samples_per_step() const = 0;
  // The model's inputs, in the order datapoints hold them; the cost of the training
  // tower (an invalid Tensor when the trainer has none).
  virtual std::vector<std::string> input_names() const = 0;
  virtual graph::Tensor cost() const = 0;

  // Profilers (callbacks/profiler.h): programs the steps compile from now on time every
  // kernel and copy on the device (vk::Recording's timestamps). Error(unsupported) where
  // the trainer cannot.
  virtual void time_kernels();
};

// Thrown by a callback (or a run_step) to end training cleanly after the current step:
// the trainer still runs after_train, as tensorpack's StopTraining.
class StopTraining : public std::exception {
 public:
  explicit StopTraining(std::string reason = "stop requested") : reason_(std::move(reason)) {}
  const char* what() const noexcept override { return reason_.c_str(); }

 private:
  std::string reason_;
};

}  // namespace vkp::callbacks
