// Callback: code that runs at fixed points of training. Public hooks are fixed and the
// trainer calls them; a callback overrides the protected on_* hooks (tensorpack's
// _before_train, _trigger_epoch, ...). Periodic behaviour is a wrapper
// (PeriodicTrigger), not a counter inside each callback.
//
// Order in one training run:
//   setup_graph                     once, before the graph is finalized
//   before_train
//   for each epoch:  before_epoch
//                    for each step: before_run, (the step), after_run, trigger_step
//                    after_epoch, trigger_epoch
//   after_train                     always, also after an exception
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "callbacks/trainer_view.h"

namespace vkp::callbacks {

class Callback {
 public:
  virtual ~Callback() = default;

  // --- public hooks, called by the trainer ---
  void setup_graph(TrainerView& trainer);
  void before_train();
  void before_epoch();
  // The tensors this callback reads every step, fixed after setup_graph (so the step's
  // recorded program never changes); the trainer fetches them with the train op.
  const std::vector<graph::Tensor>& fetches() const { return fetches_; }
  void before_run();
  // `values` holds fetches()' values of this step, in order.
  void after_run(std::span<const Array> values);
  // Tensors read only with the last step of each epoch (tensorpack's MergeAllSummaries:
  // activations summarised once an epoch), fixed after setup_graph; the trainer runs
  // that step with them, and hands their values to after_epoch_run after after_run.
  const std::vector<graph::Tensor>& epoch_fetches() const { return epoch_fetches_; }
  void after_epoch_run(std::span<const Array> values);
  void trigger_step();
  void after_epoch();
  void trigger_epoch();
  // What periodic wrappers call: by default what trigger_epoch does.
  void trigger();
  void after_train();

  // Runs only in the chief process (logs, checkpoints).
  bool chief_only() const { return chief_only_; }
  virtual std::string name() const;

 protected:
  // --- hooks to override; each defaults to nothing ---
  virtual void on_setup_graph() {}
  // Tensors to fetch every step; called once, right after on_setup_graph.
  virtual std::vector<graph::Tensor> on_fetches() { return {}; }
  virtual void on_before_train() {}
  virtual void on_before_epoch() {}
  virtual void on_before_run() {}
  virtual void on_after_run(std::span<const Array>) {}
  // Tensors to fetch with the last step of every epoch; called once, after on_fetches.
  virtual std::vector<graph::Tensor> on_epoch_fetches() { return {}; }
  virtual void on_after_epoch_run(std::span<const Array>) {}
  virtual void on_trigger_step() {}
  virtual void on_after_epoch() {}
  // By default an epoch's trigger is the callback's trigger.
  virtual void on_trigger_epoch() { on_trigger(); }
  virtual void on_trigger() {}
  virtual void on_after_train() {}

  TrainerView& trainer() const;
  bool chief_only_ = false;

 private:
  TrainerView* trainer_ = nullptr;
  std::vector<graph::Tensor> fetches_, epoch_fetches_;
};

using CallbackPtr = std::shared_ptr<Callback>;

}  // namespace vkp::callbacks
