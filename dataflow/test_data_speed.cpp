#include "dataflow/test_data_speed.h"

#include <chrono>
#include <string>

#include "core/log.h"

namespace vkp::dataflow {
namespace {

using Clock = std::chrono::steady_clock;

double since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

// Reads one datapoint, starting a new epoch at the end of one; false when an epoch
// right after its start is empty.
bool read_one(DataFlow& df) {
  if (df.next()) return true;
  df.start_epoch();
  return df.next().has_value();
}

}  // namespace

TestDataSpeed::TestDataSpeed(DataFlow& df, std::size_t count, std::size_t warmup, std::FILE* progress)
    : df_(&df), count_(count), warmup_(warmup), progress_(progress) {}

DataSpeed TestDataSpeed::run() {
  if (!df_->is_reset()) df_->reset_state();
  df_->start_epoch();
  for (std::size_t i = 0; i < warmup_; ++i)
    if (!read_one(*df_)) break;
  DataSpeed speed;
  const Clock::time_point start = Clock::now();
  Clock::time_point last_draw = start;
  while (speed.datapoints < count_ && read_one(*df_)) {
    ++speed.datapoints;
    if (progress_ && Clock::now() - last_draw > std::chrono::milliseconds(100)) {
      last_draw = Clock::now();
      draw_bar(speed.datapoints, since(start));
    }
  }
  speed.seconds = since(start);
  if (progress_) {
    draw_bar(speed.datapoints, speed.seconds);
    std::fputc('\n', progress_);
  }
  log_info("TestDataSpeed: {} datapoints in {:.3f} s, {:.1f} datapoints/s", speed.datapoints, speed.seconds,
           speed.per_second());
  return speed;
}

void TestDataSpeed::draw_bar(std::size_t done, double seconds) const {
  constexpr int kWidth = 30;
  const int filled = count_ ? static_cast<int>(kWidth * done / count_) : kWidth;
  const std::string bar = std::string(static_cast<std::size_t>(filled), '#') +
                          std::string(static_cast<std::size_t>(kWidth - filled), '.');
  const double rate = seconds > 0 ? static_cast<double>(done) / seconds : 0;
  std::fprintf(progress_, "\r[%s] %zu/%zu %.1f dp/s", bar.c_str(), done, count_, rate);
  std::fflush(progress_);
}

}  // namespace vkp::dataflow
