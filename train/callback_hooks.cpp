#include "train/callback_hooks.h"

#include <fmt/format.h>

#include "core/crash_point.h"
#include "core/error.h"

namespace vkp::train {

void CallbackHooks::set(const std::vector<callbacks::CallbackPtr>& callbacks,
                        std::shared_ptr<callbacks::Monitors> monitors, bool chief, StopAgreement agreement) {
  callbacks_.clear();
  for (const callbacks::CallbackPtr& cb : callbacks)
    if (!cb->chief_only() || chief) callbacks_.push_back(cb);
  callbacks_.push_back(monitors);
  monitors_ = std::move(monitors);
  agreement_ = std::move(agreement);
  stop_reason_.clear();
}

void CallbackHooks::check_stop() const {
  if (!agreement_) return;
  const bool requested = !stop_reason_.empty();
  std::string reason = agreement_(requested);
  if (!reason.empty()) throw callbacks::StopTraining(requested ? stop_reason_ : std::move(reason));
}

void CallbackHooks::setup_graph(callbacks::TrainerView& trainer) {
  fetches_.clear();
  for (const callbacks::CallbackPtr& cb : callbacks_) {
    if (cb != monitors_) cb->setup_graph(trainer);
    for (const graph::Tensor& t : cb->fetches()) fetches_.push_back(t);
  }
  with_epoch_ = fetches_;
  for (const callbacks::CallbackPtr& cb : callbacks_)
    for (const graph::Tensor& t : cb->epoch_fetches()) with_epoch_.push_back(t);
}

void CallbackHooks::deliver(std::span<const Array> values) {
  loop_->clock->advance();
  const bool with_epoch = has_epoch_fetches() && values.size() == with_epoch_.size();
  VKP_CHECK(values.size() == fetches_.size() || with_epoch,
            "a step's fetched values match neither the callbacks' fetches nor those with the epoch's");
  std::size_t at = 0;
  each([&](callbacks::Callback& cb) {
    const std::size_t n = cb.fetches().size();
    const std::size_t first = at;
    at += n;
    cb.after_run(values.subspan(first, n));
  });
  if (with_epoch)
    each([&](callbacks::Callback& cb) {
      const std::size_t n = cb.epoch_fetches().size();
      const std::size_t first = at;
      at += n;
      if (n > 0) cb.after_epoch_run(values.subspan(first, n));
    });
  delivered_ = true;
  if (crash_points_armed()) crash_point(fmt::format("step/{}", loop_->clock->now()));
}

std::vector<Array> CallbackHooks::run(graph::Session& session, const graph::Feeds& feeds,
                                      const std::vector<graph::Tensor>& fetches,
                                      const std::vector<graph::Tensor>& targets) {
  if (delivered_) return session.run(feeds, fetches, targets);  // the callbacks had this step's values
  std::vector<graph::Tensor> all = fetches;
  const std::vector<graph::Tensor>& hooked = step_fetches();
  all.insert(all.end(), hooked.begin(), hooked.end());
  std::vector<Array> values = session.run(feeds, all, targets);
  deliver(std::span<const Array>(values).subspan(fetches.size()));
  values.resize(fetches.size());
  return values;
}

void CallbackHooks::after_train(std::exception_ptr& failure) {
  for (const callbacks::CallbackPtr& cb : callbacks_) {
    try {
      cb->after_train();
    } catch (...) {
      if (!failure) failure = std::current_exception();
    }
  }
}

}  // namespace vkp::train
