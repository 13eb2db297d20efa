// Callbacks made of other callbacks (tensorpack's ProxyCallback and Callbacks):
//   ProxyCallback  every hook passed to one callback; the periodic wrappers (periodic.h)
//                  derive from it and change only the hooks they gate
//   Callbacks      a group run as one, in order, each with its own fetches
// The wrapped callbacks are set up with the same trainer.
#pragma once

#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

class ProxyCallback : public Callback {
 public:
  explicit ProxyCallback(CallbackPtr callback);  // Error(invalid_argument) when null
  std::string name() const override { return "Proxy(" + inner_->name() + ")"; }

 protected:
  void on_setup_graph() override { inner_->setup_graph(trainer()); }
  std::vector<graph::Tensor> on_fetches() override { return inner_->fetches(); }
  std::vector<graph::Tensor> on_epoch_fetches() override { return inner_->epoch_fetches(); }
  void on_before_train() override { inner_->before_train(); }
  void on_before_epoch() override { inner_->before_epoch(); }
  void on_before_run() override { inner_->before_run(); }
  void on_after_run(std::span<const Array> values) override { inner_->after_run(values); }
  void on_after_epoch_run(std::span<const Array> values) override { inner_->after_epoch_run(values); }
  void on_trigger_step() override { inner_->trigger_step(); }
  void on_after_epoch() override { inner_->after_epoch(); }
  void on_trigger_epoch() override { inner_->trigger_epoch(); }
  void on_trigger() override { inner_->trigger(); }
  void on_after_train() override { inner_->after_train(); }

  CallbackPtr inner_;
};

// On a process that is not the chief, the members that are chief-only do nothing.
class Callbacks : public Callback {
 public:
  explicit Callbacks(std::vector<CallbackPtr> callbacks);  // Error(invalid_argument) on a null one
  std::string name() const override;

 protected:
  void on_setup_graph() override;
  std::vector<graph::Tensor> on_fetches() override;
  std::vector<graph::Tensor> on_epoch_fetches() override;
  void on_before_train() override;
  void on_before_epoch() override;
  void on_before_run() override;
  void on_after_run(std::span<const Array> values) override;
  void on_after_epoch_run(std::span<const Array> values) override;
  void on_trigger_step() override;
  void on_after_epoch() override;
  void on_trigger_epoch() override;
  void on_trigger() override;
  void on_after_train() override;

 private:
  template <class Hook>
  void each(Hook hook);
  std::vector<CallbackPtr> members_;
  std::vector<Callback*> active_;  // the members that run in this process, set up
};

}  // namespace vkp::callbacks
