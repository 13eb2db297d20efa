// Moving summaries: scalars of the training graph averaged over steps and reported every
// epoch (tensorpack's add_moving_summary and MovingAverageSummary).
#pragma once

#include <deque>
#include <map>
#include <string>
#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

// Keeps an exponential moving average of each scalar, value = decay * value + (1 -
// decay) * new, in a non-trainable variable "<node name>/EMA" updated with the train op
// (an update op, as tensorpack keeps them): it is checkpointed with everything else, so
// a resumed run reports what an uninterrupted one does. Name the tensors with
// identity(t, "name"); they are reported under that name. Only in a training tower; in
// other towers it does nothing. Returns the first tensor, so it can wrap an expression.
graph::Tensor add_moving_summary(graph::Tensor t, float decay = 0.95f);
void add_moving_summary(const std::vector<graph::Tensor>& ts, float decay = 0.95f);

// tensorpack's add_activation_summary: `t` (an activation of the training tower, of rank
// 2 or more, f32) is summarised once an epoch, from the epoch's last training step, by
// ActivationSummaries (pictures.h; a default callback): a histogram
// "activation-summary/<name>-histogram", its zero fraction "...-sparsity" and root mean
// square "...-rms", <name> the tensor's name (name it with identity(t, "name")). Only in
// a training tower; in other towers it does nothing. Returns `t`.
graph::Tensor add_activation_summary(graph::Tensor t);
// The activations add_activation_summary registered in `graph`.
const std::vector<graph::Tensor>& activation_summaries(graph::Graph& graph);

// Puts every moving summary of the trainer's graph into the monitors at every trigger
// (the end of every epoch), corrected for its zero start: divided by 1 - decay^steps,
// steps being the global step (as Adam corrects its moments).
class MovingAverageSummary : public Callback {
 public:
  // The values put at the last trigger, by name.
  const std::map<std::string, double>& averages() const { return averages_; }

 protected:
  void on_setup_graph() override;
  void on_trigger() override;

 private:
  struct Summary {
    std::string name, variable;
    double decay;
  };
  std::vector<Summary> summaries_;
  std::map<std::string, double> averages_;
};

// tensorpack's SimpleMovingAverage: the mean of each named scalar tensor over the last
// `window_size` steps, fetched every step and put into the monitors as "<name>/SMA" after
// every step whose global step is a multiple of window_size (as tensorpack's).
class SimpleMovingAverage : public Callback {
 public:
  explicit SimpleMovingAverage(std::vector<std::string> names, std::size_t window_size = 100);

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;
  void on_trigger_step() override;

 private:
  std::vector<std::string> names_;
  std::size_t window_;
  std::vector<std::deque<double>> recent_;  // by name, the last window_ values
};

}  // namespace vkp::callbacks
