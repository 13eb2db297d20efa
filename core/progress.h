// A tqdm-like progress line, the one rule the training bar (callbacks/progress_bar.h) and
// the dataset predictor (train/dataset_predictor.h) draw with:
//   Epoch 3 [ 234/469]  50% |######    | 00:12<00:11, 19.50it/s
// and a printer that redraws it in place on a terminal (at most 10 times a second) and
// writes a line every 30 s and one at the end into a file or pipe.
#pragma once

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

namespace vkp {

// "mm:ss", or "h:mm:ss" from an hour on.
std::string clock_text(double seconds);

// `label` [done/total] percent |bar| elapsed<left, rate; total <= 0 (unknown): no
// percent, bar or time left.
std::string progress_line(const std::string& label, std::int64_t done, std::int64_t total, double elapsed_seconds);

class ProgressPrinter {
 public:
  // `out` null: draws nothing.
  ProgressPrinter(std::FILE* out, std::string label, std::int64_t total);
  // `done` items so far; `extra` follows the line (", cost=0.3").
  void update(std::int64_t done, const std::string& extra = {});
  // The last line, ended.
  void finish(std::int64_t done, const std::string& extra = {});

 private:
  std::string line(std::int64_t done, const std::string& extra) const;

  std::FILE* out_;
  std::string label_;
  std::int64_t total_;
  bool terminal_;
  std::chrono::steady_clock::time_point start_, last_draw_;
};

}  // namespace vkp
