#include "callbacks/callback.h"

#include <cxxabi.h>

#include <cstdlib>
#include <typeinfo>

#include "core/error.h"

namespace vkp::callbacks {

void TrainerView::time_kernels() {
  throw Error(ErrorCode::unsupported, "this trainer does not time its kernels, which a profiler needs");
}

PredictFn TrainerView::predictor(const std::vector<std::string>&, const std::vector<std::string>&) {
  throw Error(ErrorCode::unsupported,
              "this trainer has no tower function to build an inference tower from; use a "
              "TowerTrainer (SimpleTrainer), or build one in the graph and run the session");
}

void Callback::setup_graph(TrainerView& trainer) {
  trainer_ = &trainer;
  on_setup_graph();
  fetches_ = on_fetches();
  epoch_fetches_ = on_epoch_fetches();
}

void Callback::before_train() { on_before_train(); }
void Callback::before_epoch() { on_before_epoch(); }
void Callback::before_run() { on_before_run(); }

void Callback::after_run(std::span<const Array> values) {
  VKP_CHECK(values.size() == fetches_.size(), name() + ": after_run got a different number of values than it fetches");
  on_after_run(values);
}

void Callback::after_epoch_run(std::span<const Array> values) {
  VKP_CHECK(values.size() == epoch_fetches_.size(),
            name() + ": after_epoch_run got a different number of values than it fetches");
  on_after_epoch_run(values);
}

void Callback::trigger_step() { on_trigger_step(); }
void Callback::after_epoch() { on_after_epoch(); }
void Callback::trigger_epoch() { on_trigger_epoch(); }
void Callback::trigger() { on_trigger(); }
void Callback::after_train() { on_after_train(); }

std::string Callback::name() const {
  const char* mangled = typeid(*this).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string out = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  if (const auto at = out.rfind("::"); at != std::string::npos) out = out.substr(at + 2);
  return out;
}

TrainerView& Callback::trainer() const {
  if (trainer_ == nullptr)
    throw Error(ErrorCode::invalid_argument, name() + " was used before setup_graph gave it a trainer");
  return *trainer_;
}

}  // namespace vkp::callbacks
