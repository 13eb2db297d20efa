#include "callbacks/profiler.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "callbacks/monitors.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/device.h"

namespace vkp::callbacks {
namespace {

using Clock = std::chrono::steady_clock;

std::int64_t nanos(Clock::time_point t, Clock::time_point origin) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(t - origin).count();
}

// A complete event ("X"): a span with a start and a duration, written in microseconds
// from whole nanoseconds (spans that meet in nanoseconds meet in the file).
nlohmann::json span(const std::string& name, int pid, int tid, std::int64_t begin_ns, std::int64_t end_ns) {
  return {{"name", name},
          {"ph", "X"},
          {"pid", pid},
          {"tid", tid},
          {"ts", static_cast<double>(begin_ns) / 1e3},
          {"dur", static_cast<double>(end_ns - begin_ns) / 1e3}};
}

nlohmann::json metadata(const char* what, int pid, int tid, const std::string& name) {
  return {{"name", what}, {"ph", "M"}, {"pid", pid}, {"tid", tid}, {"args", {{"name", name}}}};
}

constexpr int kHostPid = 1, kLoopTid = 1, kComputeTid = 1;

void add_run(nlohmann::json& events, const ProgramRun& run, int index, Clock::time_point origin) {
  for (const graph::HostSpan& h : run.host) {
    nlohmann::json e = span(graph::to_string(h.kind), kHostPid, kLoopTid, nanos(h.begin, origin), nanos(h.end, origin));
    e["args"] = {{"program", index}, {"variant", h.variant}};
    events.push_back(std::move(e));
  }
  const std::int64_t anchor = nanos(run.anchor, origin);
  for (const vk::KernelTime& k : run.kernels) {
    nlohmann::json e = span(k.node.empty() ? k.label : k.node, 2 + run.device, kComputeTid,
                            anchor + std::llround(k.begin_ns), anchor + std::llround(k.begin_ns + k.ns));
    e["cat"] = k.copy ? "copy" : "kernel";
    e["args"] = {{"kernel", k.label}, {"program", index}};
    events.push_back(std::move(e));
  }
}

}  // namespace

StepProfile profile_step(TrainerView& trainer, Clock::time_point begin, Clock::time_point end) {
  StepProfile step{trainer.global_step(), begin, end, {}};
  std::vector<const vk::Device*> devices;
  for (const StepProgram& p : trainer.step_programs()) {
    const auto seen = std::find(devices.begin(), devices.end(), p.device);
    const int device = static_cast<int>(seen - devices.begin());
    if (seen == devices.end()) devices.push_back(p.device);
    std::vector<graph::HostSpan> host = p.program->host_spans().since(begin);
    const auto submit = std::find_if(host.rbegin(), host.rend(),
                                     [](const graph::HostSpan& h) { return h.kind == graph::HostSpan::Kind::submit; });
    if (submit == host.rend()) continue;  // not run in this step
    ProgramRun run{device, p.device->label(), std::move(host), {}, submit->begin};
    if (p.program->plan().timed) run.kernels = p.program->kernel_times();
    step.runs.push_back(std::move(run));
  }
  return step;
}

std::string chrome_trace(const std::vector<StepProfile>& steps, Clock::time_point origin) {
  nlohmann::json events = nlohmann::json::array();
  events.push_back(metadata("process_name", kHostPid, kLoopTid, "host"));
  events.push_back(metadata("thread_name", kHostPid, kLoopTid, "training loop"));
  std::map<int, std::string> devices;
  for (const StepProfile& s : steps) {
    events.push_back(
        span(fmt::format("step {}", s.step), kHostPid, kLoopTid, nanos(s.begin, origin), nanos(s.end, origin)));
    for (std::size_t i = 0; i < s.runs.size(); ++i) {
      add_run(events, s.runs[i], static_cast<int>(i), origin);
      devices[s.runs[i].device] = s.runs[i].device_label;
    }
  }
  for (const auto& [d, label] : devices) {
    events.push_back(metadata("process_name", 2 + d, kComputeTid, label));
    events.push_back(metadata("thread_name", 2 + d, kComputeTid, "compute queue"));
  }
  return nlohmann::json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ns"}}.dump(1);
}

std::vector<OpTime> op_times(const StepProfile& step) {
  std::map<std::string, OpTime> by_node;
  for (const ProgramRun& run : step.runs)
    for (const vk::KernelTime& k : run.kernels) {
      // A node's feed or fetch copy apart from its kernels.
      const std::string name = (k.node.empty() ? k.label : k.node) + (k.copy ? " (copy)" : "");
      OpTime& op = by_node[name];
      op.node = name;
      ++op.commands;
      op.ns += k.ns;
    }
  std::vector<OpTime> ops;
  for (auto& [name, op] : by_node) ops.push_back(std::move(op));
  std::stable_sort(ops.begin(), ops.end(), [](const OpTime& a, const OpTime& b) { return a.ns > b.ns; });
  return ops;
}

GraphProfiler::GraphProfiler(GraphProfilerOptions options) : options_(std::move(options)) { chief_only_ = true; }

void GraphProfiler::on_setup_graph() {
  if (options_.dir.empty()) options_.dir = trainer().logger_dir();
  if (options_.dir.empty())
    throw Error(ErrorCode::invalid_argument,
                "GraphProfiler writes its traces into the log directory: give the "
                "trainer a logger_dir or the profiler a dir");
  std::error_code ec;
  std::filesystem::create_directories(options_.dir, ec);
  if (ec) throw Error(ErrorCode::io, "GraphProfiler: cannot create " + options_.dir + ": " + ec.message());
  trainer().time_kernels();
}

void GraphProfiler::on_before_train() { origin_ = Clock::now(); }

void GraphProfiler::on_before_run() { step_begin_ = Clock::now(); }

bool GraphProfiler::traced_step() const {
  if (!options_.steps.empty())
    return std::find(options_.steps.begin(), options_.steps.end(), trainer().global_step()) != options_.steps.end();
  return trainer().local_step() == std::min<std::int64_t>(1, trainer().steps_per_epoch() - 1);
}

void GraphProfiler::on_trigger_step() {
  if (!traced_step()) return;
  const StepProfile step = profile_step(trainer(), step_begin_, Clock::now());
  const std::string path = fmt::format("{}/chrome-trace-{}.json", options_.dir, step.step);
  write_file_atomically(path, chrome_trace({step}, origin_));
  written_.push_back(path);
  report(step);
}

void GraphProfiler::report(const StepProfile& step) {
  bool untimed = false;
  for (const ProgramRun& run : step.runs) untimed = untimed || run.kernels.empty();
  if (untimed && !warned_untimed_) {
    log_warn(
        "GraphProfiler: step {} ran a program without timestamps (compiled before profiling began, or on a "
        "device whose queue has none): its kernels are not in the trace",
        step.step);
    warned_untimed_ = true;
  }
  const std::vector<OpTime> ops = op_times(step);
  double device_ns = 0;
  for (const OpTime& op : ops) device_ns += op.ns;
  const double step_ms = std::chrono::duration<double, std::milli>(step.end - step.begin).count();
  std::string table = fmt::format(
      "GraphProfiler: step {}: {:.3f} ms on the host, {:.3f} ms on the devices; "
      "the ops that took most:\n{:>10} {:>6} {:>8}  {}",
      step.step, step_ms, device_ns * 1e-6, "ms", "share", "commands", "node");
  const auto rows = std::min<std::size_t>(ops.size(), static_cast<std::size_t>(std::max(0, options_.top_ops)));
  for (std::size_t i = 0; i < rows; ++i)
    table += fmt::format("\n{:>10.4f} {:>5.1f}% {:>8}  {}", ops[i].ns * 1e-6,
                         device_ns > 0 ? 100 * ops[i].ns / device_ns : 0.0, ops[i].commands, ops[i].node);
  log_info("{}", table);
  Monitors& monitors = trainer().monitors();
  monitors.put_scalar("GraphProfiler/step_ms", step_ms);
  monitors.put_scalar("GraphProfiler/device_ms", device_ns * 1e-6);
  for (std::size_t i = 0; i < rows; ++i) monitors.put_scalar("GraphProfiler/op_ms/" + ops[i].node, ops[i].ns * 1e-6);
}

void DeviceUtilizationTracker::on_setup_graph() { trainer().time_kernels(); }

void DeviceUtilizationTracker::on_before_epoch() {
  epoch_begin_ = Clock::now();
  busy_ns_.clear();
}

void DeviceUtilizationTracker::on_trigger_step() {
  const StepProfile step = profile_step(trainer(), step_begin_, Clock::now());
  for (const ProgramRun& run : step.runs) {
    double& busy = busy_ns_[run.device];
    for (const vk::KernelTime& k : run.kernels) busy += k.ns;
  }
}

void DeviceUtilizationTracker::on_trigger_epoch() {
  const double wall_ns = std::chrono::duration<double, std::nano>(Clock::now() - epoch_begin_).count();
  for (const auto& [device, busy] : busy_ns_) {
    const double percent = wall_ns > 0 ? 100 * busy / wall_ns : 0;
    log_info("DeviceUtilization/{}: {:.1f}% of the epoch's {:.2f} s", device, percent, wall_ns * 1e-9);
    trainer().monitors().put_scalar(fmt::format("DeviceUtilization/{}", device), percent);
  }
}

}  // namespace vkp::callbacks
