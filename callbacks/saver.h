// Savers: ModelSaver writes a checkpoint (checkpoint.h) at the end of every epoch and
// keeps the newest max_to_keep; under PeriodicTrigger every k steps it saves inside
// epochs too, and AutoResumeTrainConfig resumes such a checkpoint with the rest of its
// epoch (one saved by an epoch's last step resumes with that epoch's end: its
// validation and statistics, without what callbacks fetch with the last step, such as
// activation summaries); MinSaver and MaxSaver keep a copy of the checkpoint at
// which a statistic was best (min-<stat>.safetensors, max-<stat>.safetensors). Chief only.
#pragma once

#include <optional>
#include <string>

#include "callbacks/callback.h"

namespace vkp::callbacks {

class ModelSaver : public Callback {
 public:
  // checkpoint_dir empty: the trainer's log directory. A model with NaN or infinite
  // variables is not saved (an Error that stops training, naming the variable) unless
  // allow_non_finite.
  explicit ModelSaver(int max_to_keep = 10, std::string checkpoint_dir = {}, bool allow_non_finite = false);
  const std::string& last_saved() const { return last_saved_; }

 protected:
  void on_setup_graph() override;
  void on_trigger() override;

 private:
  int max_to_keep_;
  std::string dir_;
  bool allow_non_finite_;
  std::string last_saved_;
};

class MinSaver : public Callback {
 public:
  // After every epoch, when `stat` (a monitored scalar) is the smallest so far (the
  // largest with `reverse`), copies the newest checkpoint to `filename` (default
  // min-<stat>.safetensors) in checkpoint_dir (default: the log directory). Put it after
  // the ModelSaver and the callback that computes the statistic. A resumed run starts
  // from the best of the earlier run's values (Monitors history from stats.json) when
  // its copy is still there, so a worse epoch after the resume does not replace it. A
  // NaN or infinite statistic is never the best.
  explicit MinSaver(std::string stat, bool reverse = false, std::string filename = {}, std::string checkpoint_dir = {});

 protected:
  void on_setup_graph() override;
  void on_before_train() override;
  void on_trigger() override;

 private:
  std::string stat_;
  bool reverse_;
  std::string filename_, dir_;
  std::optional<double> best_;
};

class MaxSaver : public MinSaver {
 public:
  explicit MaxSaver(std::string stat, std::string filename = {}, std::string checkpoint_dir = {})
      : MinSaver(std::move(stat), true, std::move(filename), std::move(checkpoint_dir)) {}
};

}  // namespace vkp::callbacks
