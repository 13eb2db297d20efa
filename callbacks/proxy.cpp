#include "callbacks/proxy.h"

#include <exception>

#include "core/error.h"

namespace vkp::callbacks {

ProxyCallback::ProxyCallback(CallbackPtr callback) : inner_(std::move(callback)) {
  if (!inner_) throw Error(ErrorCode::invalid_argument, "a callback wrapper was given no callback");
  chief_only_ = inner_->chief_only();
}

Callbacks::Callbacks(std::vector<CallbackPtr> callbacks) : members_(std::move(callbacks)) {
  for (const CallbackPtr& c : members_)
    if (!c) throw Error(ErrorCode::invalid_argument, "Callbacks: a member is null");
}

std::string Callbacks::name() const {
  std::string text = "Callbacks(";
  for (std::size_t i = 0; i < members_.size(); ++i) text += (i ? ", " : "") + members_[i]->name();
  return text + ")";
}

template <class Hook>
void Callbacks::each(Hook hook) {
  for (Callback* c : active_) hook(*c);
}

void Callbacks::on_setup_graph() {
  active_.clear();
  for (const CallbackPtr& c : members_)
    if (!c->chief_only() || trainer().is_chief()) {
      c->setup_graph(trainer());
      active_.push_back(c.get());
    }
}

std::vector<graph::Tensor> Callbacks::on_fetches() {
  std::vector<graph::Tensor> all;
  each([&](Callback& c) { all.insert(all.end(), c.fetches().begin(), c.fetches().end()); });
  return all;
}

std::vector<graph::Tensor> Callbacks::on_epoch_fetches() {
  std::vector<graph::Tensor> all;
  each([&](Callback& c) { all.insert(all.end(), c.epoch_fetches().begin(), c.epoch_fetches().end()); });
  return all;
}

void Callbacks::on_before_train() {
  each([](Callback& c) { c.before_train(); });
}
void Callbacks::on_before_epoch() {
  each([](Callback& c) { c.before_epoch(); });
}
void Callbacks::on_before_run() {
  each([](Callback& c) { c.before_run(); });
}

void Callbacks::on_after_run(std::span<const Array> values) {
  std::size_t at = 0;
  each([&](Callback& c) {
    c.after_run(values.subspan(at, c.fetches().size()));
    at += c.fetches().size();
  });
}

void Callbacks::on_after_epoch_run(std::span<const Array> values) {
  std::size_t at = 0;
  each([&](Callback& c) {
    c.after_epoch_run(values.subspan(at, c.epoch_fetches().size()));
    at += c.epoch_fetches().size();
  });
}

void Callbacks::on_trigger_step() {
  each([](Callback& c) { c.trigger_step(); });
}
void Callbacks::on_after_epoch() {
  each([](Callback& c) { c.after_epoch(); });
}
void Callbacks::on_trigger_epoch() {
  each([](Callback& c) { c.trigger_epoch(); });
}
void Callbacks::on_trigger() {
  each([](Callback& c) { c.trigger(); });
}
void Callbacks::on_after_train() {
  // Every member's, as the trainer promises each callback; the first error after them.
  std::exception_ptr first;
  each([&first](Callback& c) {
    try {
      c.after_train();
    } catch (...) {
      if (!first) first = std::current_exception();
    }
  });
  if (first) std::rethrow_exception(first);
}

}  // namespace vkp::callbacks
