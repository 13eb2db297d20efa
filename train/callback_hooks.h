// CallbackHooks: the callbacks of one training run, in the order their hooks run, what
// they fetch in a step, and whether the step has handed them its values (tensorpack's
// hooked session, less the session). The trainer's loop (train/trainer.h) calls every
// callback through it; a step, whichever run_step ran it, delivers its values once.
#pragma once

#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "callbacks/monitors.h"
#include "engine/graph/session.h"

namespace vkp::train {

// Several processes that train together (DistributedTrainer) must stop at the same step,
// or the others wait in a collective for the one that left: given whether this process
// was asked to stop, a StopAgreement says whether any was (the reason, empty to go on).
using StopAgreement = std::function<std::string(bool requested)>;

class CallbackHooks {
 public:
  // The hooks of the trainer whose progress is `loop`: a delivery counts its global step.
  explicit CallbackHooks(const callbacks::TrainLoop& loop) : loop_(&loop) {}
  CallbackHooks(const CallbackHooks&) = delete;
  CallbackHooks& operator=(const CallbackHooks&) = delete;

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
  // Whether the step the loop is at runs the epoch fetches too: its epoch's last.
  bool fetches_epoch() const { return has_epoch_fetches() && loop_->last_step_of_epoch(); }
  // What the step the loop is at fetches for the callbacks.
  const std::vector<graph::Tensor>& step_fetches() const { return fetches_epoch() ? with_epoch_ : fetches_; }

  // Before a step runs: nothing delivered yet.
  void begin_step() { delivered_ = false; }
  bool delivered() const { return delivered_; }
  // The step has run: counts the global step (after_run sees it counted, as in
  // tensorpack, where the step counter is the first callback) and hands the step's
  // values of step_fetches() to each callback's after_run, and with the epoch's,
  // after_epoch_run.
  void deliver(std::span<const Array> values);
  // For a run_step of one's own: runs `targets` in `session` with `feeds` and, when this
  // step has not delivered yet, step_fetches(), which it delivers; returns `fetches`'.
  std::vector<Array> run(graph::Session& session, const graph::Feeds& feeds, const std::vector<graph::Tensor>& fetches,
                         const std::vector<graph::Tensor>& targets);

  // after_train of every callback, whatever happened before; the first error it throws
  // becomes `failure` where that is null.
  void after_train(std::exception_ptr& failure);

 private:
  std::vector<callbacks::CallbackPtr> callbacks_;
  std::shared_ptr<callbacks::Monitors> monitors_;
  StopAgreement agreement_;
  std::string stop_reason_;  // the first StopTraining noted since set()
  std::vector<graph::Tensor> fetches_, with_epoch_;
  const callbacks::TrainLoop* loop_;
  bool delivered_ = false;  // this step handed the callbacks their values
};

}  // namespace vkp::train
