// Callbacks that measure the run: remaining time, throughput, device and host memory.
#pragma once

#include <chrono>
#include <deque>

#include "callbacks/callback.h"

namespace vkp::callbacks {

// Logs the estimated time left after every epoch, from the mean of the last k epochs.
class EstimatedTimeLeft : public Callback {
 public:
  explicit EstimatedTimeLeft(int last_k_epochs = 5);

 protected:
  void on_before_epoch() override;
  void on_trigger_epoch() override;

 private:
  int last_k_;
  std::chrono::steady_clock::time_point start_;
  std::deque<double> durations_;
};

// Puts "Throughput (samples/sec)" and "Throughput (steps/sec)" of every epoch.
class ThroughputTracker : public Callback {
 protected:
  void on_before_epoch() override;
  void on_trigger_epoch() override;

 private:
  std::chrono::steady_clock::time_point start_;
  std::int64_t start_step_ = 0;
};

// Puts "PeakMemory(MB)", the most device memory the trainer has held, every epoch.
class PeakMemoryTracker : public Callback {
 protected:
  void on_trigger_epoch() override;
};

// tensorpack's HostMemoryTracker: this process's resident memory "HostMemory/rss(MB)" and
// its peak "HostMemory/peak_rss(MB)", and the memory the system can still give
// "HostMemory/available(GB)", logged and put before training and every epoch (Linux's
// /proc; elsewhere it warns once and puts nothing).
class HostMemoryTracker : public Callback {
 protected:
  void on_before_train() override { report(); }
  void on_trigger_epoch() override { report(); }

 private:
  void report();
  bool warned_ = false;
};

// What HostMemoryTracker reads: bytes, or -1 where the system does not say.
struct HostMemory {
  double rss = -1, peak_rss = -1, available = -1;
};
HostMemory host_memory();

}  // namespace vkp::callbacks
