#include "callbacks/progress_bar.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

#include <fmt/format.h>

namespace vkp::callbacks {
namespace {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

}  // namespace

ProgressBar::ProgressBar(std::vector<std::string> names) : names_(std::move(names)) {
  chief_only_ = true;
  terminal_ = isatty(STDERR_FILENO) != 0;
}

std::vector<graph::Tensor> ProgressBar::on_fetches() {
  std::vector<graph::Tensor> ts;
  for (const std::string& name : names_) ts.push_back(trainer().graph().find(name));
  return ts;
}

void ProgressBar::on_before_epoch() {
  start_ = last_draw_ = std::chrono::steady_clock::now();
  values_.assign(names_.size(), 0.0);
}

void ProgressBar::on_after_run(std::span<const Array> values) {
  for (std::size_t i = 0; i < values.size(); ++i) values_[i] = values[i].data<float>()[0];
}

std::string ProgressBar::line() const {
  const TrainerView& t = trainer();
  const std::int64_t total = t.steps_per_epoch(), done = std::min(t.local_step() + 1, total);
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  const int width = 20, filled = total > 0 ? static_cast<int>(width * done / total) : 0;
  std::string text = fmt::format("Epoch {} [{:>{}}/{}] {:3}% |{}{}| {}<{}, {:.2f}it/s", t.epoch_num(), done,
                                 std::to_string(total).size(), total, total > 0 ? 100 * done / total : 0,
                                 std::string(static_cast<std::size_t>(filled), '#'),
                                 std::string(static_cast<std::size_t>(width - filled), ' '), clock_text(elapsed),
                                 clock_text(left), rate);
  for (std::size_t i = 0; i < names_.size(); ++i) text += fmt::format(", {}={:.4g}", names_[i], values_[i]);
  return text;
}

void ProgressBar::on_trigger_step() {
  const auto now = std::chrono::steady_clock::now();
  if (!terminal_) {
    // A log file gets a line every 30 s of a long epoch, not a redraw every step.
    if (now - last_draw_ < std::chrono::seconds(30) || trainer().local_step() + 1 >= trainer().steps_per_epoch()) return;
    last_draw_ = now;
    std::fprintf(stderr, "%s\n", line().c_str());
    std::fflush(stderr);
    return;
  }
  if (now - last_draw_ < std::chrono::milliseconds(100) && trainer().local_step() + 1 < trainer().steps_per_epoch()) return;
  last_draw_ = now;
  std::fprintf(stderr, "\r%s", line().c_str());
  std::fflush(stderr);
}

void ProgressBar::on_after_epoch() {
  std::fprintf(stderr, terminal_ ? "\r%s\n" : "%s\n", line().c_str());
  std::fflush(stderr);
}

}  // namespace vkp::callbacks
