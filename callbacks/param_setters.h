// Hyperparameter setters: set a hyperparameter of the session (Graph::hyperparameter,
// e.g. "learning_rate") by epoch, by step, by a function or by a monitored statistic,
// without re-recording anything (tensorpack's HyperParamSetter family).
//
// A setter sets the value of an epoch when it begins (before_epoch), not when the one
// before it ends (tensorpack's trigger_epoch): a checkpoint written at an epoch's end
// then holds the value that epoch used, wherever the setter stands in the callback list,
// and a resumed run makes the next change once, as the uninterrupted run did, also for
// setters whose value depends on the current one (HyperParamSetterWithFunc,
// StatMonitorParamSetter). Statistics put in an epoch's trigger_epoch are seen by the
// setter at the next epoch's start whatever the order of the callbacks.
#pragma once

#include <functional>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

class HyperParamSetter : public Callback {
 public:
  explicit HyperParamSetter(std::string param) : param_(std::move(param)) {}
  const std::string& param() const { return param_; }

 protected:
  // The value for the coming epoch, asked when it begins, or nullopt to leave it as it is.
  virtual std::optional<float> value_to_set(int coming_epoch) = 0;
  // Sets value_to_set(coming_epoch) if it differs from the current value, and logs it
  // (at debug level for the changes of step-based setters, which come every step).
  void apply(int coming_epoch, bool every_step = false);
  float current() const;

  void on_before_epoch() override { apply(trainer().epoch_num()); }

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

// Linear warmup, then cosine decay, by global step s, set before every step (the
// schedule of transformer training):
//   s < warmup:  peak (s + 1) / warmup
//   else:        final + (peak - final) (1 + cos(pi min(1, (s - warmup) / (total - warmup)))) / 2
// A function of the global step alone, so a resumed run continues it exactly.
class WarmupCosineSchedule : public HyperParamSetter {
 public:
  WarmupCosineSchedule(std::string param, float peak, std::int64_t warmup_steps, std::int64_t total_steps,
                       float final_value = 0.0f);
  // The value for global step `step`.
  float value_at(std::int64_t step) const;

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;
  void on_trigger_step() override { apply(trainer().epoch_num(), true); }

 private:
  float peak_, final_;
  std::int64_t warmup_, total_;
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
// "reduce the learning rate on a plateau"; then waits last_k epochs before the next
// change. A resumed run finds the earlier epochs' values in the Monitors' history
// (stats.json) and replays its decisions on them, so it changes where the uninterrupted
// run would have.
class StatMonitorParamSetter : public HyperParamSetter {
 public:
  StatMonitorParamSetter(std::string param, std::string stat, std::function<float(float)> value_fn, double threshold,
                         int last_k, bool reverse = false);

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;
  void on_before_train() override;

 private:
  // Whether the last last_k_ of `history`'s values gained no more than threshold_ over
  // the best before them, and no change was made in the last last_k_ epochs.
  bool plateaued(std::span<const std::pair<std::int64_t, double>> history, int coming_epoch) const;

  std::string stat_;
  std::function<float(float)> value_fn_;
  double threshold_;
  int last_k_;
  bool reverse_;
  std::int64_t last_changed_ = -1;  // the epoch that began with the last change
};

// tensorpack's HumanHyperParamSetter: the value a person writes into a file while training
// runs, read when each epoch begins: the last line "<param>:<value>" of `file` (a relative
// path is under the log directory, and then training needs one: Error at setup; default
// hyper.txt). No file, or no line for the hyperparameter: the value stays. A line for it
// that is not a finite number is named in a warning and the value stays (a typo in a
// hand-edited file does not stop training).
class HumanHyperParamSetter : public HyperParamSetter {
 public:
  explicit HumanHyperParamSetter(std::string param, std::string file = "hyper.txt");

 protected:
  std::optional<float> value_to_set(int coming_epoch) override;
  void on_setup_graph() override;

 private:
  std::string file_;
};

}  // namespace vkp::callbacks
