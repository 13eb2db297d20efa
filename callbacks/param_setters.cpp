#include "callbacks/param_setters.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "callbacks/monitors.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {

float HyperParamSetter::current() const { return trainer().hyperparameter(param_); }

void HyperParamSetter::apply(int coming_epoch, bool every_step) {
  const std::optional<float> value = value_to_set(coming_epoch);
  if (!value || *value == current()) return;
  trainer().set_hyperparameter(param_, *value);
  if (every_step)
    log_debug("{} set to {:.6g} at global step {}", param_, *value, trainer().global_step());
  else
    log_info("{} set to {:.6g} at global step {}", param_, *value, trainer().global_step());
}

ScheduledHyperParamSetter::ScheduledHyperParamSetter(std::string param,
                                                     std::vector<std::pair<std::int64_t, float>> schedule,
                                                     Interpolation interpolation, bool step_based)
    : HyperParamSetter(std::move(param)),
      schedule_(std::move(schedule)),
      interpolation_(interpolation),
      step_based_(step_based) {
  if (schedule_.empty()) throw Error(ErrorCode::invalid_argument, "ScheduledHyperParamSetter: the schedule is empty");
  for (std::size_t i = 1; i < schedule_.size(); ++i)
    if (schedule_[i].first <= schedule_[i - 1].first)
      throw Error(ErrorCode::invalid_argument, "ScheduledHyperParamSetter: schedule points must increase");
}

std::optional<float> ScheduledHyperParamSetter::value_to_set(int coming_epoch) {
  // Schedules in steps look at the coming step, the global step.
  const std::int64_t at = step_based_ ? trainer().global_step() : coming_epoch;
  if (at < schedule_.front().first) return std::nullopt;
  const auto next = std::upper_bound(schedule_.begin(), schedule_.end(), at,
                                     [](std::int64_t v, const auto& point) { return v < point.first; });
  const auto& [x0, y0] = *(next - 1);
  if (interpolation_ == Interpolation::none || next == schedule_.end()) return y0;
  const auto& [x1, y1] = *next;
  const double t = static_cast<double>(at - x0) / static_cast<double>(x1 - x0);
  return static_cast<float>(y0 + t * (y1 - y0));
}

void ScheduledHyperParamSetter::on_trigger_step() {
  if (step_based_) apply(trainer().epoch_num(), true);
}

WarmupCosineSchedule::WarmupCosineSchedule(std::string param, float peak, std::int64_t warmup_steps,
                                           std::int64_t total_steps, float final_value)
    : HyperParamSetter(std::move(param)), peak_(peak), final_(final_value), warmup_(warmup_steps), total_(total_steps) {
  if (!(peak >= 0.0f) || !(final_value >= 0.0f) || warmup_steps < 0 || total_steps <= warmup_steps)
    throw Error(ErrorCode::invalid_argument,
                "WarmupCosineSchedule: needs peak, final >= 0 and 0 <= warmup_steps < total_steps; got peak " +
                    std::to_string(peak) + ", final " + std::to_string(final_value) + ", warmup " +
                    std::to_string(warmup_steps) + ", total " + std::to_string(total_steps));
}

float WarmupCosineSchedule::value_at(std::int64_t step) const {
  if (step < warmup_) return static_cast<float>(double{peak_} * static_cast<double>(step + 1) / static_cast<double>(warmup_));
  const double progress = std::min(1.0, static_cast<double>(step - warmup_) / static_cast<double>(total_ - warmup_));
  return static_cast<float>(final_ + (double{peak_} - final_) * 0.5 * (1.0 + std::cos(std::acos(-1.0) * progress)));
}

std::optional<float> WarmupCosineSchedule::value_to_set(int) { return value_at(trainer().global_step()); }

HyperParamSetterWithFunc::HyperParamSetterWithFunc(std::string param, std::function<float(int, float)> fn)
    : HyperParamSetter(std::move(param)), fn_(std::move(fn)) {}

std::optional<float> HyperParamSetterWithFunc::value_to_set(int coming_epoch) { return fn_(coming_epoch, current()); }

StatMonitorParamSetter::StatMonitorParamSetter(std::string param, std::string stat, std::function<float(float)> value_fn,
                                               double threshold, int last_k, bool reverse)
    : HyperParamSetter(std::move(param)),
      stat_(std::move(stat)),
      value_fn_(std::move(value_fn)),
      threshold_(threshold),
      last_k_(last_k),
      reverse_(reverse) {}

bool StatMonitorParamSetter::plateaued(std::span<const std::pair<std::int64_t, double>> history,
                                       int coming_epoch) const {
  const auto k = static_cast<std::size_t>(last_k_);
  if (history.size() <= k || coming_epoch - last_changed_ <= last_k_) return false;
  // Improvement of the last k values over the best before them.
  const auto split = history.end() - last_k_;
  double before = split[-1].second, recent = split->second;
  for (auto it = history.begin(); it != split; ++it)
    before = reverse_ ? std::max(before, it->second) : std::min(before, it->second);
  for (auto it = split; it != history.end(); ++it)
    recent = reverse_ ? std::max(recent, it->second) : std::min(recent, it->second);
  const double gain = reverse_ ? recent - before : before - recent;
  return gain <= threshold_;
}

void StatMonitorParamSetter::on_before_train() {
  // Replays the decisions an earlier run made at the start of each of its epochs, on the
  // values it had then, for the epoch of its last change.
  last_changed_ = -1;
  const Monitors& m = trainer().monitors();
  if (!m.has_history(stat_)) return;
  const auto& history = m.get_history(stat_);
  const std::int64_t steps = trainer().steps_per_epoch();
  for (int epoch = 1; epoch < trainer().starting_epoch(); ++epoch) {
    const std::int64_t last_step = static_cast<std::int64_t>(epoch - 1) * steps;
    const auto end = std::find_if(history.begin(), history.end(), [&](const auto& v) { return v.first > last_step; });
    if (plateaued({history.begin(), end}, epoch)) last_changed_ = epoch;
  }
}

std::optional<float> StatMonitorParamSetter::value_to_set(int coming_epoch) {
  const Monitors& m = trainer().monitors();
  if (!m.has_history(stat_) || !plateaued(m.get_history(stat_), coming_epoch)) return std::nullopt;
  last_changed_ = coming_epoch;
  log_info("{} has not improved by more than {} in {} epochs", stat_, threshold_, last_k_);
  return value_fn_(current());
}

HumanHyperParamSetter::HumanHyperParamSetter(std::string param, std::string file)
    : HyperParamSetter(std::move(param)), file_(std::move(file)) {}

void HumanHyperParamSetter::on_setup_graph() {
  if (std::filesystem::path(file_).is_relative() && trainer().logger_dir().empty())
    throw Error(ErrorCode::invalid_argument, "HumanHyperParamSetter reads " + file_ +
                                                 " in the log directory, and this run has none: give it one, or an "
                                                 "absolute path");
}

std::optional<float> HumanHyperParamSetter::value_to_set(int) {
  std::filesystem::path path(file_);
  if (path.is_relative()) path = std::filesystem::path(trainer().logger_dir()) / path;
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::string line, last;
  int last_number = 0;
  for (int number = 1; std::getline(in, line); ++number) {
    const std::size_t start = line.find_first_not_of(" \t");
    const std::size_t colon = line.find(':');
    if (start == std::string::npos || colon == std::string::npos || colon < start ||
        line.substr(start, colon - start) != param())
      continue;
    last = line.substr(colon + 1);  // the last line for it decides, as tensorpack's dict
    last_number = number;
  }
  if (last_number == 0) return std::nullopt;
  char* end = nullptr;
  const float value = std::strtof(last.c_str(), &end);
  const bool whole = end != last.c_str() && std::all_of(static_cast<const char*>(end), last.c_str() + last.size(),
                                                        [](char c) { return c == ' ' || c == '\t' || c == '\r'; });
  if (!whole || !std::isfinite(value)) {
    log_warn("HumanHyperParamSetter: {} line {}: '{}' is not a finite number for {}; it stays {}", path.string(),
             last_number, last, param(), current());
    return std::nullopt;
  }
  return value;
}

}  // namespace vkp::callbacks
