// Monitors: where training statistics go. A Monitors group is itself a callback; the
// trainer and other callbacks put scalars into it, and each Monitor in the group
// receives them: JSONWriter (stats.json), ScalarPrinter (the log), TFEventWriter
// (TensorBoard event files).
#pragma once

#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"

#include "callbacks/callback.h"

namespace vkp::callbacks {

// One destination of statistics. Hooks are called by the Monitors group that owns it.
class Monitor {
 public:
  virtual ~Monitor() = default;
  // Called from the group's setup_graph: the trainer (logger_dir, global_step, ...).
  virtual void setup(TrainerView& trainer) { trainer_ = &trainer; }
  // A scalar, with the global step it belongs to.
  virtual void process_scalar(const std::string& name, double value, std::int64_t step) = 0;
  // An image of height x width with 1 to 4 channels as a PNG; a histogram of values.
  // Monitors that keep only numbers (stats.json, the log) ignore them.
  virtual void process_image(const std::string& name, int height, int width, int channels, const std::string& png,
                             std::int64_t step) {
    (void)name, (void)height, (void)width, (void)channels, (void)png, (void)step;
  }
  virtual void process_histogram(const std::string& name, std::span<const float> values, std::int64_t step) {
    (void)name, (void)values, (void)step;
  }
  // At the end of every epoch (after the epoch's scalars are in).
  virtual void trigger_epoch() {}
  // After setup: what an earlier run that this one resumes recorded (JSONWriter: the
  // stats.json entries it keeps), by scalar name, as (global step, value) in order.
  virtual void restored_history(std::map<std::string, std::vector<std::pair<std::int64_t, double>>>& into) const {
    (void)into;
  }
  virtual void close() {}

 protected:
  TrainerView& trainer() const { return *trainer_; }

 private:
  TrainerView* trainer_ = nullptr;
};

using MonitorPtr = std::shared_ptr<Monitor>;

class Monitors : public Callback {
 public:
  explicit Monitors(std::vector<MonitorPtr> monitors);

  // Records a scalar at the current global step and hands it to every monitor.
  void put_scalar(const std::string& name, double value);
  // An image [H, W] or [H, W, C] (u8, or f32 in [0, 1]) at the current global step: PNG
  // encoded once for every monitor (TensorBoard's image summary).
  void put_image(const std::string& name, const Array& image);
  // Values summarised as a histogram (TensorBoard's histogram summary).
  void put_histogram(const std::string& name, std::span<const float> values);
  // The latest value put under `name`; Error(not_found) naming it when none was.
  double get_latest(const std::string& name) const;
  bool has(const std::string& name) const { return latest_.count(name) > 0; }
  // Every value put under `name`, in order, with its step; on a resumed run, after the
  // values the earlier run recorded (restored_history), which get_latest() does not see.
  const std::vector<std::pair<std::int64_t, double>>& get_history(const std::string& name) const;
  bool has_history(const std::string& name) const { return history_.count(name) > 0; }

 protected:
  void on_setup_graph() override;
  void on_trigger_epoch() override;
  void on_after_train() override;

 private:
  std::vector<MonitorPtr> monitors_;
  std::map<std::string, double> latest_;
  std::map<std::string, std::vector<std::pair<std::int64_t, double>>> history_;
};

}  // namespace vkp::callbacks
