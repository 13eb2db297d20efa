// Profilers (tensorpack's callbacks/prof.py): GraphProfiler writes a timeline of chosen
// steps that Perfetto and chrome://tracing open, and a table of the ops that took the
// device's time; DeviceUtilizationTracker (tensorpack's GPUUtilizationTracker) puts how
// busy each device was. Both read the device's own timestamps (vk::Recording): with
// either callback the trainer compiles its step programs with a timestamp after every
// kernel and copy; without them nothing is timed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "engine/graph/program.h"

namespace vkp::callbacks {

// What one step ran: each program that was submitted in it, its host calls and, when it
// was compiled timed, its device spans.
struct ProgramRun {
  int device = 0;  // the trainer's device index (first seen first)
  std::string device_label;
  std::vector<graph::HostSpan> host;
  std::vector<vk::KernelTime> kernels;           // empty: compiled before profiling began
  std::chrono::steady_clock::time_point anchor;  // the device spans start here: its last submit
};

struct StepProfile {
  std::int64_t step = 0;                             // the global step after it
  std::chrono::steady_clock::time_point begin, end;  // before_run to trigger_step
  std::vector<ProgramRun> runs;
};

// The step's programs: those with a submit since `begin`.
StepProfile profile_step(TrainerView& trainer, std::chrono::steady_clock::time_point begin,
                         std::chrono::steady_clock::time_point end);

// The Chrome trace-event JSON of `steps` (the "JSON object format": traceEvents with
// complete events, ph "X", in microseconds from `origin`): process 1 is the host (the
// training loop's steps, and each program's feed, submit and wait inside them; with
// double-buffered inputs a step's feed writes the next step's batch), process
// 2 + d device d with one thread per queue ("compute"), each kernel and copy named by
// its graph node, its kernel and the program in args. Device spans are placed from the
// submit that started them: the device's clock is not the host's.
std::string chrome_trace(const std::vector<StepProfile>& steps, std::chrono::steady_clock::time_point origin);

// Device time by graph node over a step's runs, largest first.
struct OpTime {
  std::string node;  // a node's feed and fetch copies apart, as "<node> (copy)"
  int commands = 0;  // kernels, or copies
  double ns = 0;
};
std::vector<OpTime> op_times(const StepProfile& step);

struct GraphProfilerOptions {
  // Global steps to trace, as the trainer counts them (the first step is 1); empty: the
  // second step of every epoch (the first may compile), or the first of a one-step epoch.
  std::vector<std::int64_t> steps;
  std::string dir;   // where chrome-trace-<step>.json goes; empty: the trainer's logger_dir
  int top_ops = 10;  // rows of the per-op table logged and put into the monitors
};

// Traces the chosen steps into <dir>/chrome-trace-<step>.json; logs each traced step's
// op table and puts "GraphProfiler/step_ms", "GraphProfiler/device_ms" and the top ops'
// "GraphProfiler/op_ms/<node>" into the monitors. Chief only.
class GraphProfiler : public Callback {
 public:
  explicit GraphProfiler(GraphProfilerOptions options = {});
  const std::vector<std::string>& written() const { return written_; }

 protected:
  void on_setup_graph() override;
  void on_before_train() override;
  void on_before_run() override;
  void on_trigger_step() override;

 private:
  bool traced_step() const;  // whether the step about to end is one to trace
  void report(const StepProfile& step);

  GraphProfilerOptions options_;
  std::chrono::steady_clock::time_point origin_, step_begin_;
  std::vector<std::string> written_;
  bool warned_untimed_ = false;
};

// tensorpack's GPUUtilizationTracker from the devices' timestamps: every epoch puts
// "DeviceUtilization/<d>" for each device d, the share (percent) of the epoch's wall
// time that its queue spent running the step programs' kernels and copies.
class DeviceUtilizationTracker : public Callback {
 protected:
  void on_setup_graph() override;
  void on_before_epoch() override;
  void on_before_run() override { step_begin_ = std::chrono::steady_clock::now(); }
  void on_trigger_step() override;
  void on_trigger_epoch() override;

 private:
  std::chrono::steady_clock::time_point epoch_begin_, step_begin_;
  std::map<int, double> busy_ns_;  // by device
};

}  // namespace vkp::callbacks
