// Moving summaries: scalars of the training graph that are averaged over steps and
// reported every epoch (tensorpack's add_moving_summary and MovingAverageSummary).
#pragma once

#include <map>
#include <string>
#include <vector>

#include "vkpack/callbacks/callback.h"

namespace vkp::callbacks {

// Marks scalar tensors for MovingAverageSummary, reported under their node names (name
// them with identity(t, "name")). Returns the first, so it can wrap an expression.
graph::Tensor add_moving_summary(graph::Tensor t);
void add_moving_summary(const std::vector<graph::Tensor>& ts);

// Fetches every moving summary each step, keeps an exponential moving average
// (value = decay * value + (1 - decay) * new), and puts the averages into the monitors
// at the end of every epoch. Inference-tower tensors are left out.
class MovingAverageSummary : public Callback {
 public:
  explicit MovingAverageSummary(float decay = 0.95f) : decay_(decay) {}
  // The current averages, by name.
  const std::map<std::string, double>& averages() const { return averages_; }

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_after_run(std::span<const Array> values) override;
  void on_trigger() override;

 private:
  float decay_;
  std::vector<std::string> names_;
  std::map<std::string, double> averages_;
};

}  // namespace vkp::callbacks
