#include "callbacks/trackers.h"

#include <fstream>
#include <numeric>
#include <sstream>

#include "callbacks/monitors.h"
#include "core/log.h"

namespace vkp::callbacks {

EstimatedTimeLeft::EstimatedTimeLeft(int last_k_epochs) : last_k_(last_k_epochs) { chief_only_ = true; }

void EstimatedTimeLeft::on_before_epoch() { start_ = std::chrono::steady_clock::now(); }

void EstimatedTimeLeft::on_trigger_epoch() {
  durations_.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count());
  while (static_cast<int>(durations_.size()) > last_k_) durations_.pop_front();
  const int left = trainer().max_epoch() - trainer().epoch_num();
  if (left <= 0) return;
  const double mean = std::accumulate(durations_.begin(), durations_.end(), 0.0) / static_cast<double>(durations_.size());
  const auto seconds = static_cast<long>(mean * left);
  log_info("Estimated time left: {}:{:02}:{:02}", seconds / 3600, seconds / 60 % 60, seconds % 60);
}

void ThroughputTracker::on_before_epoch() {
  start_ = std::chrono::steady_clock::now();
  start_step_ = trainer().global_step();
}

void ThroughputTracker::on_trigger_epoch() {
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  const auto steps = static_cast<double>(trainer().global_step() - start_step_);
  if (seconds <= 0 || steps <= 0) return;
  trainer().monitors().put_scalar("Throughput (steps/sec)", steps / seconds);
  trainer().monitors().put_scalar("Throughput (samples/sec)",
                                  steps * static_cast<double>(trainer().samples_per_step()) / seconds);
}

void PeakMemoryTracker::on_trigger_epoch() {
  trainer().monitors().put_scalar("PeakMemory(MB)", static_cast<double>(trainer().peak_device_memory_bytes()) / (1 << 20));
}

namespace {

// The value in kB of `key` ("VmRSS:") in a /proc file of "key value kB" lines, in bytes.
double proc_kilobytes(const char* file, const std::string& key) {
  std::ifstream in(file);
  std::string line;
  while (std::getline(in, line))
    if (line.rfind(key, 0) == 0) {
      std::istringstream fields(line.substr(key.size()));
      double kb = -1;
      if (fields >> kb) return kb * 1024.0;
    }
  return -1;
}

}  // namespace

HostMemory host_memory() {
  return {proc_kilobytes("/proc/self/status", "VmRSS:"), proc_kilobytes("/proc/self/status", "VmHWM:"),
          proc_kilobytes("/proc/meminfo", "MemAvailable:")};
}

void HostMemoryTracker::report() {
  const HostMemory m = host_memory();
  if (m.rss < 0 || m.available < 0) {
    if (!warned_) log_warn("HostMemoryTracker: this system has no /proc/self/status or /proc/meminfo to read");
    warned_ = true;
    return;
  }
  Monitors& monitors = trainer().monitors();
  monitors.put_scalar("HostMemory/rss(MB)", m.rss / (1 << 20));
  if (m.peak_rss >= 0) monitors.put_scalar("HostMemory/peak_rss(MB)", m.peak_rss / (1 << 20));
  monitors.put_scalar("HostMemory/available(GB)", m.available / (1 << 30));
  log_info("HostMemoryTracker: this process holds {:.0f} MB (peak {:.0f} MB); {:.2f} GB available",
           m.rss / (1 << 20), m.peak_rss / (1 << 20), m.available / (1 << 30));
}

}  // namespace vkp::callbacks
