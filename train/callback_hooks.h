// CallbackHooks: the callbacks of one training run, in the order their hooks run, and
// what they fetch in a step. The trainer's loop (train/trainer.h) calls every callback
// through it and hands it the values a step fetched.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "callbacks/monitors.h"

namespace vkp::train {

// Several processes that train together (DistributedTrainer) must stop at the same step,
// or the others wait in a collective for the one that left: given whether this process
// was asked to stop, a StopAgreement says whether any was (the reason, empty to go on).
using StopAgreement = std::function<std::string(bool requested)>;

class CallbackHooks {
 public:
  // The run's callbacks: those of `callbacks` that run on this process (a chief_only one
  // only on the chief), then `monitors`, last, so that its epoch trigger sees every
  // epoch scalar. With an `agreement` (processes that must stop at the same step), a
  // StopTraining thrown by a hook is noted, the other callbacks' hooks still run, and
  // check_stop() asks the others.
  void set(const std::vector<callbacks::CallbackPtr>& callbacks, std::shared_ptr<callbacks::Monitors> monitors,
           bool chief, StopAgreement agreement);
  // setup_graph of every callback but the monitors (the trainer sets those up first),
  // then their fetches, in callback order.
  void setup_graph(callbacks::TrainerView& trainer);

  // nullptr before set().
  callbacks::Monitors* monitors() const { return monitors_.get(); }

  // Runs `hook` on every callback, in order.
  template <class Hook>
  void each(Hook&& hook) {
    for (const callbacks::CallbackPtr& cb : callbacks_) {
      if (!agreement_) {
        hook(*cb);
        continue;
      }
      try {
        hook(*cb);
      } catch (const callbacks::StopTraining& stop) {  // the others still run: every process runs the same hooks
        if (stop_reason_.empty()) stop_reason_ = stop.what();
      }
    }
  }
  // With an agreement, at the end of a step, an epoch or before_train: throws
  // StopTraining when any process asked to stop (this one's own reason first).
  void check_stop() const;

  // Every callback's fetches of a step, in callback order.
  const std::vector<graph::Tensor>& fetches() const { return fetches_; }
  bool has_epoch_fetches() const { return with_epoch_.size() > fetches_.size(); }
  // fetches(), then every callback's epoch fetches (what the last step of an epoch runs).
  const std::vector<graph::Tensor>& fetches_with_epoch() const { return with_epoch_; }
  // Whether the step `loop` is at runs the epoch fetches too: its epoch's last.
  bool fetches_epoch(const callbacks::TrainLoop& loop) const {
    return has_epoch_fetches() && loop.last_step_of_epoch();
  }
  // What the step `loop` is at fetches for the callbacks.
  const std::vector<graph::Tensor>& step_fetches(const callbacks::TrainLoop& loop) const {
    return fetches_epoch(loop) ? with_epoch_ : fetches_;
  }
  // Hands a step's values of fetches() or fetches_with_epoch() to each callback's
  // after_run, and with the epoch's, after_epoch_run.
  void deliver(std::span<const Array> values);

  // after_train of every callback, whatever happened before; the first error it throws
  // becomes `failure` where that is null.
  void after_train(std::exception_ptr& failure);

 private:
  std::vector<callbacks::CallbackPtr> callbacks_;
  std::shared_ptr<callbacks::Monitors> monitors_;
  StopAgreement agreement_;
  std::string stop_reason_;  // the first StopTraining noted since set()
  std::vector<graph::Tensor> fetches_, with_epoch_;
};

}  // namespace vkp::train
