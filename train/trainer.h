// Trainer: the loop every trainer shares (tensorpack's Trainer):
//   setup_graph of every callback, session_init, before_train,
//   epochs of steps (before_run, run_step, after_run, trigger_step),
//   after_epoch, trigger_epoch, and after_train always, also after an exception;
// StopTraining ends the loop cleanly. The base class runs anything that runs in a loop:
// a subclass may override run_step (a GAN alternating two optimizers), and a graph built
// by hand trains through set_step without a ModelDesc.
#pragma once

#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "callbacks/monitors.h"
#include "engine/graph/graph.h"
#include "engine/graph/session.h"
#include "train/callback_hooks.h"
#include "train/default_step.h"
#include "train/input_source.h"
#include "train/session_init.h"
#include "train/train_loop_options.h"
#include "train/trainer_state.h"

namespace vkp::vk {
class Device;
}

namespace vkp::train {

struct TrainOptions : TrainLoopOptions {
  std::vector<callbacks::CallbackPtr> callbacks;
  std::vector<callbacks::MonitorPtr> monitors;
};

// What a step took and cost (Trainer::samples_per_step(), last_cost()).
struct StepResult {
  std::int64_t samples = 0;
  double cost = 0;
};

class Trainer : public callbacks::TrainerView {
 public:
  // Trains on `device`; `seed` drives the graph's random initial values and masks.
  explicit Trainer(vk::Device& device, std::uint64_t seed = 0);
  ~Trainer() override;

  // The step the default run_step runs: feeds `inputs` (placeholders) from `source`,
  // runs `targets` (the train op) and fetches `cost` (may be an invalid Tensor).
  void set_step(std::vector<graph::Tensor> inputs, InputSourcePtr source, std::vector<graph::Tensor> targets,
                graph::Tensor cost);
  void train(TrainOptions options);

  // One training step. The default feeds the next batch, runs the train op with every
  // callback's fetches, and hands the values to after_run.
  virtual void run_step();

  // For a run_step of one's own: runs `targets` with `feeds` and, the first time in a
  // step, the callbacks' fetches (their values go to after_run); returns `fetches`'.
  std::vector<Array> run_hooked(const graph::Feeds& feeds, const std::vector<graph::Tensor>& fetches,
                                const std::vector<graph::Tensor>& targets) {
    return hooks_.run(session(), feeds, fetches, targets);
  }
  // The cost of the last step (NaN when the default step has none).
  double last_cost() const { return result_.cost; }

  // --- TrainerView ---
  const callbacks::TrainLoop& loop() const override { return loop_; }
  TrainerState& state() override { return *state_; }
  callbacks::Monitors& monitors() override;
  const std::string& logger_dir() const override { return logger_dir_; }
  bool is_chief() const override { return true; }
  std::int64_t samples_per_step() const override { return result_.samples; }
  std::vector<std::string> input_names() const override;
  graph::Tensor cost() const override { return step_.cost(); }
  void time_kernels() override;

  vk::Device& device() { return *device_; }
  // The session of the training graph (tower 0's with several towers). Callbacks see the
  // model through state() instead, which answers from a master kept elsewhere and
  // drains async towers first.
  graph::Session& session() { return state_->session(); }

 protected:
  // Where the model lives from now on (a multi-device trainer's towers); the default is
  // a SessionState on the trainer's device.
  void set_state(std::unique_ptr<TrainerState> state) { state_ = std::move(state); }
  // At the end of every epoch, after the state's sync and before the callbacks'
  // after_epoch: what the trainer itself has to say about the epoch (the async towers'
  // staleness).
  virtual void report_epoch() {}

  // For a run_step of one's own that feeds the callbacks itself (multi-device trainers).
  InputSource& input_source();
  // The run's callbacks: what this step fetches for them (hooks().step_fetches()) and
  // where its values go (hooks().deliver(values), once a step).
  CallbackHooks& hooks() { return hooks_; }
  // How this process agrees with others on when to stop (DistributedTrainer's MPI
  // vote); none by default: a StopTraining ends training at once.
  virtual StopAgreement stop_agreement() { return {}; }
  // Batches one step takes from the input source (one per local tower).
  virtual std::int64_t batches_per_step() const { return 1; }
  void set_step_result(StepResult result) { result_ = result; }

 private:
  void setup(TrainOptions& options);
  void run_epochs();

  vk::Device* device_;
  std::unique_ptr<TrainerState> state_;
  callbacks::TrainLoop loop_;  // its clock: the global step, which the sessions read during train()
  CallbackHooks hooks_{loop_};
  DefaultStep step_;  // set_step's
  StepResult result_;
  std::string logger_dir_;
};

// tensorpack's NoOpTrainer: a step runs nothing but the callbacks' fetches (if any: with
// no train op and no input), so that callbacks run on the trainer's loop, counters and
// monitors alone (an evaluation, a schedule, a sweep of one's own callbacks). Give
// steps_per_epoch: there is no input to size an epoch.
class NoOpTrainer : public Trainer {
 public:
  using Trainer::Trainer;
  void run_step() override;
};

}  // namespace vkp::train
