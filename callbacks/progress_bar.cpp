#include "callbacks/progress_bar.h"

#include <algorithm>

#include <fmt/format.h>

namespace vkp::callbacks {

ProgressBar::ProgressBar(std::vector<std::string> names) : names_(std::move(names)) { chief_only_ = true; }

std::vector<graph::Tensor> ProgressBar::on_fetches() {
  std::vector<graph::Tensor> ts;
  for (const std::string& name : names_) ts.push_back(trainer().graph().find(name));
  return ts;
}

void ProgressBar::on_before_epoch() {
  printer_.emplace(stderr, fmt::format("Epoch {}", trainer().epoch_num()), trainer().steps_per_epoch());
  values_.assign(names_.size(), 0.0);
}

void ProgressBar::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i) values_[i] = values[i].data<float>()[0];
}

std::string ProgressBar::shown() const {
  std::string text;
  for (std::size_t i = 0; i < names_.size(); ++i) text += fmt::format(", {}={:.4g}", names_[i], values_[i]);
  return text;
}

void ProgressBar::on_trigger_step() {
  const std::int64_t done = trainer().local_step() + 1;
  if (printer_ && done < trainer().steps_per_epoch()) printer_->update(done, shown());  // the last: after_epoch
}

void ProgressBar::on_after_epoch() {
  if (printer_) printer_->finish(std::min(trainer().local_step() + 1, trainer().steps_per_epoch()), shown());
}

}  // namespace vkp::callbacks
