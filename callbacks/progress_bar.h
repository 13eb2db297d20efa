// ProgressBar: a tqdm-like line on stderr for each epoch (core/progress.h):
//   Epoch 3 [ 234/469]  50% |######    | 00:12<00:11, 19.50it/s, cost=0.341
// redrawn in place on a terminal (at most 10 times a second); into a file or pipe, a line
// every 30 s and one at the end of the epoch. `names` are scalar tensors fetched every step and shown.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "core/progress.h"

namespace vkp::callbacks {

class ProgressBar : public Callback {
 public:
  explicit ProgressBar(std::vector<std::string> names = {});

 protected:
  std::vector<graph::Tensor> on_fetches() override;
  void on_before_epoch() override;
  void on_after_run(std::span<const Array> values) override;
  void on_trigger_step() override;
  void on_after_epoch() override;

 private:
  std::string shown() const;  // ", name=value" of every name

  std::vector<std::string> names_;
  std::vector<double> values_;
  std::optional<ProgressPrinter> printer_;  // this epoch's
};

}  // namespace vkp::callbacks
