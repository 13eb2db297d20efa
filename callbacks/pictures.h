// Pictures of what a model does, for TensorBoard and the log directory:
//   DumpTensorAsImage  a tensor of images as a PNG grid in the log directory and an image
//                      summary (tensorpack's DumpTensorAsImage; a GAN's samples)
//   ParamHistograms    variables as histogram summaries and their root mean square as
//                      scalars (tensorpack's add_param_summary with 'histogram', 'rms')
//   ActivationSummaries  what add_activation_summary registered: a histogram, the zero
//                      fraction and the rms of each activation, once an epoch
//   GradientSummaries  the same for SummaryGradient's gradients (histogram and rms)
// The first two act at their trigger: every epoch, or as PeriodicTrigger says.
#pragma once

#include <string>
#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

class DumpTensorAsImage : public Callback {
 public:
  // `tensor`: images [N, H, W] or [N, H, W, C] (C of 1, 3 or 4), fetched every step; at
  // a trigger the last step's value * scale + offset (f32, then taken as [0, 1]; u8 as
  // it is) goes as a grid of rows x cols cells (0: a square grid that holds N) to
  // <logger dir>/<prefix>-<global step>.png (prefix: the tensor's name, '/' as '-') and
  // to the monitors under the tensor's name.
  explicit DumpTensorAsImage(std::string tensor, std::string prefix = {}, int rows = 0, int cols = 0,
                             float scale = 1.0f, float offset = 0.0f);
  // The PNG written last; empty before the first trigger or without a logger directory.
  const std::string& last_written() const { return last_written_; }

 protected:
  void on_setup_graph() override;
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;
  void on_trigger() override;

 private:
  std::string tensor_, prefix_;
  int rows_, cols_;
  float scale_, offset_;
  Array last_;
  bool have_ = false;
  std::string last_written_;
};

class ParamHistograms : public Callback {
 public:
  // Variables whose whole name matches one of `patterns` (regular expressions): a
  // histogram "param-summary/<name>" and a scalar "param-summary/<name>-rms".
  explicit ParamHistograms(std::vector<std::string> patterns) : patterns_(std::move(patterns)) {}

 protected:
  void on_setup_graph() override;
  void on_trigger() override;

 private:
  std::vector<std::string> patterns_;
  std::vector<std::string> names_;  // the variables matched
};

// Summarises the activations of add_activation_summary (summary.h) with the last training
// step of every epoch, as tensorpack's MergeAllSummaries does: the values that step
// computed, fetched with it only (other steps fetch nothing for it). One of the default
// callbacks; with no activation registered it does nothing.
class ActivationSummaries : public Callback {
 public:
  ActivationSummaries() { chief_only_ = true; }

 protected:
  void on_setup_graph() override;
  std::vector<graph::Tensor> on_epoch_fetches() override { return tensors_; }
  void on_after_epoch_run(std::span<const Array> values) override;

 private:
  std::vector<graph::Tensor> tensors_;
};

// SummaryGradient's graph form (engine/graph/grad_proc.h): each registered gradient's
// histogram "<variable>-grad" and root mean square "<variable>/rms", from the last
// training step of every epoch, fetched with it only. The trainer adds it whenever the
// graph has such gradients, whatever callbacks the user chose.
class GradientSummaries : public Callback {
 public:
  GradientSummaries() { chief_only_ = true; }

 protected:
  void on_setup_graph() override;
  std::vector<graph::Tensor> on_epoch_fetches() override { return tensors_; }
  void on_after_epoch_run(std::span<const Array> values) override;

 private:
  std::vector<graph::Tensor> tensors_;
};

}  // namespace vkp::callbacks
