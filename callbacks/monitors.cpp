#include "callbacks/monitors.h"

#include "core/error.h"
#include "core/image_file.h"

namespace vkp::callbacks {

Monitors::Monitors(std::vector<MonitorPtr> monitors) : monitors_(std::move(monitors)) {}

void Monitors::on_setup_graph() {
  latest_.clear();
  history_.clear();
  for (const MonitorPtr& m : monitors_) m->setup(trainer());
  // The first monitor that kept an earlier run's values gives them (they are the same).
  for (const MonitorPtr& m : monitors_) {
    m->restored_history(history_);
    if (!history_.empty()) break;
  }
}

void Monitors::put_scalar(const std::string& name, double value) {
  const std::int64_t step = trainer().global_step();
  latest_[name] = value;
  history_[name].emplace_back(step, value);
  for (const MonitorPtr& m : monitors_) m->process_scalar(name, value, step);
}

void Monitors::put_image(const std::string& name, const Array& image) {
  const std::string png = vkp::encode_png(image);  // checks the shape and type
  const int h = static_cast<int>(image.shape()[0]), w = static_cast<int>(image.shape()[1]),
            c = image.shape().rank() == 3 ? static_cast<int>(image.shape()[2]) : 1;
  const std::int64_t step = trainer().global_step();
  for (const MonitorPtr& m : monitors_) m->process_image(name, h, w, c, png, step);
}

void Monitors::put_histogram(const std::string& name, std::span<const float> values) {
  const std::int64_t step = trainer().global_step();
  for (const MonitorPtr& m : monitors_) m->process_histogram(name, values, step);
}

double Monitors::get_latest(const std::string& name) const {
  const auto it = latest_.find(name);
  if (it == latest_.end()) throw Error(ErrorCode::not_found, "no statistic named '" + name + "' has been put yet");
  return it->second;
}

const std::vector<std::pair<std::int64_t, double>>& Monitors::get_history(const std::string& name) const {
  const auto it = history_.find(name);
  if (it == history_.end()) throw Error(ErrorCode::not_found, "no statistic named '" + name + "' has been put yet");
  return it->second;
}

void Monitors::on_trigger_epoch() {
  for (const MonitorPtr& m : monitors_) m->trigger_epoch();
}

void Monitors::on_after_train() {
  for (const MonitorPtr& m : monitors_) m->close();
}

}  // namespace vkp::callbacks
