#include "core/progress.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>

namespace vkp {

std::string clock_text(double seconds) {
  const auto s = static_cast<long>(seconds);
  return s >= 3600 ? fmt::format("{}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60)
                   : fmt::format("{:02}:{:02}", s / 60, s % 60);
}

std::string progress_line(const std::string& label, std::int64_t done, std::int64_t total, double elapsed) {
  const double rate = elapsed > 0 ? static_cast<double>(done) / elapsed : 0;
  if (total <= 0) return fmt::format("{} [{}] {}, {:.2f}it/s", label, done, clock_text(elapsed), rate);
  const double left = rate > 0 ? static_cast<double>(total - done) / rate : 0;
  const std::int64_t width = 20, filled = width * std::min(done, total) / total;
  return fmt::format("{} [{:>{}}/{}] {:3}% |{}{}| {}<{}, {:.2f}it/s", label, done, std::to_string(total).size(), total,
                     100 * done / total, std::string(static_cast<std::size_t>(filled), '#'),
                     std::string(static_cast<std::size_t>(width - filled), ' '), clock_text(elapsed), clock_text(left),
                     rate);
}

ProgressPrinter::ProgressPrinter(std::FILE* out, std::string label, std::int64_t total)
    : out_(out), label_(std::move(label)), total_(total), terminal_(out != nullptr && isatty(fileno(out)) != 0) {
  start_ = last_draw_ = std::chrono::steady_clock::now();
}

std::string ProgressPrinter::line(std::int64_t done, const std::string& extra) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  return progress_line(label_, done, total_, elapsed) + extra;
}

void ProgressPrinter::update(std::int64_t done, const std::string& extra) {
  if (out_ == nullptr) return;
  const auto now = std::chrono::steady_clock::now();
  // A file gets a line every 30 s of long work, not a redraw for every item.
  if (now - last_draw_ < (terminal_ ? std::chrono::milliseconds(100) : std::chrono::milliseconds(30000))) return;
  last_draw_ = now;
  std::fprintf(out_, terminal_ ? "\r%s" : "%s\n", line(done, extra).c_str());
  std::fflush(out_);
}

void ProgressPrinter::finish(std::int64_t done, const std::string& extra) {
  if (out_ == nullptr) return;
  std::fprintf(out_, terminal_ ? "\r%s\n" : "%s\n", line(done, extra).c_str());
  std::fflush(out_);
}

}  // namespace vkp
