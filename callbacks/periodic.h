// Wrappers that change when a callback runs (tensorpack's PeriodicTrigger,
// PeriodicCallback, EnableCallbackIf; ProxyCallbacks, proxy.h), and CallbackFactory for
// callbacks made of functions. The wrapped callback is set up with the same trainer.
#pragma once

#include <functional>

#include "callbacks/callback.h"
#include "callbacks/proxy.h"

namespace vkp::callbacks {

// Calls the callback's trigger() every k steps and/or every k epochs (0: never) instead
// of its own trigger_step / trigger_epoch; every other hook passes through.
class PeriodicTrigger : public ProxyCallback {
 public:
  PeriodicTrigger(CallbackPtr callback, std::int64_t every_k_steps, int every_k_epochs = 0, bool before_train = false);
  std::string name() const override { return "PeriodicTrigger(" + inner_->name() + ")"; }

 protected:
  void on_before_train() override;
  void on_trigger_step() override;
  void on_trigger_epoch() override;

 private:
  std::int64_t every_k_steps_;
  int every_k_epochs_;
  bool before_train_;
};

// Runs the callback's per-epoch and per-step hooks, and trigger(), only when `enabled`
// says so (tensorpack's EnableCallbackIf); setup_graph, before_train and after_train
// always run. A step's after_run and trigger_step follow what was decided at its
// before_run.
class EnableCallbackIf : public ProxyCallback {
 public:
  EnableCallbackIf(CallbackPtr callback, std::function<bool(const TrainerView&)> enabled);
  std::string name() const override { return "EnableCallbackIf(" + inner_->name() + ")"; }

 protected:
  void on_before_epoch() override;
  void on_before_run() override;
  void on_after_run(std::span<const Array> values) override;
  void on_after_epoch_run(std::span<const Array> values) override {
    if (step_enabled_) inner_->after_epoch_run(values);
  }
  void on_trigger_step() override;
  void on_after_epoch() override;
  void on_trigger_epoch() override;
  void on_trigger() override;

 private:
  bool enabled() const { return enabled_(trainer()); }
  std::function<bool(const TrainerView&)> enabled_;
  bool step_enabled_ = false;  // decided at the step's before_run
};

// The callback's hooks only in every k-th epoch (epochs k, 2k, ...), as tensorpack's
// PeriodicCallback(every_k_epochs=k).
class PeriodicCallback : public EnableCallbackIf {
 public:
  PeriodicCallback(CallbackPtr callback, int every_k_epochs);
};

struct CallbackFunctions {
  std::function<void(TrainerView&)> setup_graph, before_train, trigger, after_train;
};

class CallbackFactory : public Callback {
 public:
  explicit CallbackFactory(CallbackFunctions functions) : f_(std::move(functions)) {}

 protected:
  void on_setup_graph() override { if (f_.setup_graph) f_.setup_graph(trainer()); }
  void on_before_train() override { if (f_.before_train) f_.before_train(trainer()); }
  void on_trigger() override { if (f_.trigger) f_.trigger(trainer()); }
  void on_after_train() override { if (f_.after_train) f_.after_train(trainer()); }

 private:
  CallbackFunctions f_;
};

}  // namespace vkp::callbacks
