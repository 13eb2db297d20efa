// Hyperparameter setters: set a hyperparameter of the session (Graph::hyperparameter,
// e.g. "learning_rate") by epoch, by step, by a function or by a monitored statistic,
// without re-recording anything (tensorpack's HyperParamSetter family). Every setter sets
// its value at before_train too, so a resumed run continues its schedule where it was.
// A setter whose value depends on the current one (HyperParamSetterWithFunc using it,
// StatMonitorParamSetter) should come after the ModelSaver in the callback list: the
// checkpoint then holds the value of the epoch it ends, and a resumed run applies the
// next change once, as the uninterrupted run did.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "vkpack/callbacks/callback.h"

namespace vkp::callbacks {

class HyperParamSetter : public Callback {
 public:
  explicit HyperParamSetter(std::string param) : param_(std::move(param)) {}
  const std::string& param() const { return param_; }

 protected:
  // The value for the coming epoch (the first one at before_train, the next one at an
  // epoch's end), or nullopt to leave it as it is.
  virtual std::optional<float> value_to_set(int coming_epoch) = 0;
  // Sets value_to_set(coming_epoch) if it differs from the current value.
  void apply(int coming_epoch);
  float current() const;

  void on_before_train() override { apply(trainer().starting_epoch()); }
  void on_trigger_epoch() override { apply(trainer().epoch_num() + 1); }

 private:
  std::string param_;
};

// schedule: (epoch, value) pairs in increasing epoch; the value of the last point at or
// before the coming epoch (with interpolation: linear between points). step_based: the
// points are global steps and the value is set every step.
class ScheduledHyperParamSetter : public HyperParamSetter {
 public:
  enum class Interpolation { none, linear };
  ScheduledHyperParamSetter(std::string param, std::vector<std::pair<std::int64_t, float>> schedule,
                            Interpolation interpolation = Interpolation::none, bool step_based = false);

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;
  void on_trigger_step() override;

 private:
  std::vector<std::pair<std::int64_t, float>> schedule_;
  Interpolation interpolation_;
  bool step_based_;
};

// value = fn(coming epoch, current value), every epoch.
class HyperParamSetterWithFunc : public HyperParamSetter {
 public:
  HyperParamSetterWithFunc(std::string param, std::function<float(int epoch, float current)> fn);

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;

 private:
  std::function<float(int, float)> fn_;
};

// When the statistic `stat` has not improved (fallen, or risen with reverse) by more
// than `threshold` over the last `last_k` epochs, sets value_fn(current): the classic
// "reduce the learning rate on a plateau".
class StatMonitorParamSetter : public HyperParamSetter {
 public:
  StatMonitorParamSetter(std::string param, std::string stat, std::function<float(float)> value_fn, double threshold,
                         int last_k, bool reverse = false);

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;
  void on_before_train() override {}

 private:
  std::string stat_;
  std::function<float(float)> value_fn_;
  double threshold_;
  int last_k_;
  bool reverse_;
  std::int64_t last_changed_ = -1;  // epoch of the last change
};

}  // namespace vkp::callbacks
