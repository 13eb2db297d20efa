#include "dataflow/dataflow.h"

#include <cxxabi.h>

#include <cstdlib>
#include <string_view>
#include <typeinfo>

namespace vkp::dataflow {

EpochRange::Iterator::Iterator(DataFlow* flow) : flow_(flow), current_(flow->next()) {}

EpochRange::Iterator& EpochRange::Iterator::operator++() {
  current_ = flow_->next();
  return *this;
}

void DataFlow::reset_state() {
  if (state_ != State::created)
    throw Error(ErrorCode::invalid_argument,
                type_name() + ": reset_state() was called twice; call it once per dataflow");
  on_reset_state();
  state_ = State::idle;
}

void DataFlow::start_epoch() {
  require_reset("start_epoch()");
  // If the hook throws, the flow stays idle and the next next() starts the epoch again.
  state_ = State::idle;
  on_start_epoch();
  state_ = State::running;
}

std::optional<Datapoint> DataFlow::next() {
  require_reset("next()");
  if (state_ == State::ended) return std::nullopt;
  if (state_ == State::idle) start_epoch();
  std::optional<Datapoint> dp = on_next();
  if (!dp) state_ = State::ended;
  return dp;
}

EpochRange DataFlow::epoch() {
  start_epoch();
  return EpochRange(*this);
}

std::string DataFlow::replay_obstacle() const {
  std::string own = own_replay_obstacle();
  if (!own.empty()) return type_name() + ": " + own;
  for (const DataFlow* input : inputs()) {
    std::string reason = input->replay_obstacle();
    if (!reason.empty()) return reason;
  }
  return {};
}

std::vector<const DataFlow*> DataFlow::pointers(const std::vector<DataFlowPtr>& flows) {
  std::vector<const DataFlow*> out;
  out.reserve(flows.size());
  for (const DataFlowPtr& f : flows) out.push_back(f.get());
  return out;
}

std::string DataFlow::type_name() const {
  const char* mangled = typeid(*this).name();
  int status = 0;
  char* demangled = abi::__cxa_demangle(mangled, nullptr, nullptr, &status);
  std::string name = status == 0 && demangled ? demangled : mangled;
  std::free(demangled);
  constexpr std::string_view kOwn = "vkp::dataflow::";
  if (name.starts_with(kOwn)) name.erase(0, kOwn.size());
  return name;
}

void DataFlow::require_reset(const char* call) const {
  if (state_ == State::created)
    throw Error(ErrorCode::invalid_argument,
                type_name() + ": " + call + " before reset_state(); call reset_state() once before iterating");
}

}  // namespace vkp::dataflow
