#include "callbacks/periodic.h"

#include "core/error.h"

namespace vkp::callbacks {

PeriodicTrigger::PeriodicTrigger(CallbackPtr callback, std::int64_t every_k_steps, int every_k_epochs,
                                 bool before_train)
    : ProxyCallback(std::move(callback)), every_k_steps_(every_k_steps), every_k_epochs_(every_k_epochs),
      before_train_(before_train) {
  if (every_k_steps_ <= 0 && every_k_epochs_ <= 0)
    throw Error(ErrorCode::invalid_argument, "PeriodicTrigger(" + inner_->name() + ") needs every_k_steps or every_k_epochs");
}

void PeriodicTrigger::on_before_train() {
  inner_->before_train();
  if (before_train_) inner_->trigger();
}

void PeriodicTrigger::on_trigger_step() {
  // global_step counts the step just run.
  if (every_k_steps_ > 0 && trainer().global_step() % every_k_steps_ == 0) inner_->trigger();
}

void PeriodicTrigger::on_trigger_epoch() {
  if (every_k_epochs_ > 0 && trainer().epoch_num() % every_k_epochs_ == 0) inner_->trigger();
}

EnableCallbackIf::EnableCallbackIf(CallbackPtr callback, std::function<bool(const TrainerView&)> enabled)
    : ProxyCallback(std::move(callback)), enabled_(std::move(enabled)) {}

void EnableCallbackIf::on_before_epoch() { if (enabled()) inner_->before_epoch(); }
void EnableCallbackIf::on_before_run() {
  step_enabled_ = enabled();
  if (step_enabled_) inner_->before_run();
}
void EnableCallbackIf::on_after_run(std::span<const Array> values) { if (step_enabled_) inner_->after_run(values); }
void EnableCallbackIf::on_trigger_step() { if (step_enabled_) inner_->trigger_step(); }
void EnableCallbackIf::on_after_epoch() { if (enabled()) inner_->after_epoch(); }
void EnableCallbackIf::on_trigger_epoch() { if (enabled()) inner_->trigger_epoch(); }
void EnableCallbackIf::on_trigger() { if (enabled()) inner_->trigger(); }

PeriodicCallback::PeriodicCallback(CallbackPtr callback, int every_k_epochs)
    : EnableCallbackIf(std::move(callback), [every_k_epochs](const TrainerView& t) {
        return every_k_epochs > 0 && t.epoch_num() % every_k_epochs == 0;
      }) {}

}  // namespace vkp::callbacks
