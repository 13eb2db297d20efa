// The profilers: GraphProfiler's Chrome traces (the format, spans that nest and add up,
// kernels named by graph nodes), its op table in the monitors, DeviceUtilizationTracker,
// and nothing timed without them.
#include "callbacks/profiler.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "callbacks/monitors.h"
#include "core/error.h"
#include "engine/graph/program.h"
#include "engine/vk/device.h"
#include "train/multi_device_trainer.h"
#include "train/tower_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using nlohmann::json;

json read_json(const std::string& path) {
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << path;
  return json::parse(in);
}

// The trace-event format's rules for the events GraphProfiler writes: complete events
// ("X") with a name, pid, tid, ts and a duration >= 0; metadata ("M") naming processes
// and threads.
void expect_trace_format(const json& trace) {
  ASSERT_TRUE(trace.is_object());
  ASSERT_TRUE(trace.contains("traceEvents") && trace["traceEvents"].is_array());
  for (const json& e : trace["traceEvents"]) {
    ASSERT_TRUE(e["name"].is_string()) << e;
    ASSERT_TRUE(e["pid"].is_number_integer() && e["tid"].is_number_integer()) << e;
    const std::string ph = e["ph"];
    if (ph == "M") {
      EXPECT_TRUE(e["name"] == "process_name" || e["name"] == "thread_name") << e;
      EXPECT_TRUE(e["args"]["name"].is_string()) << e;
      continue;
    }
    ASSERT_EQ(ph, "X") << e;
    ASSERT_TRUE(e["ts"].is_number() && e["dur"].is_number()) << e;
    EXPECT_GE(e["dur"].get<double>(), 0) << e;
  }
}

struct Span {
  std::string name;
  double begin = 0, end = 0;
  json args;
};

// The complete events of process `pid`, by start.
std::vector<Span> spans_of(const json& trace, int pid) {
  std::vector<Span> spans;
  for (const json& e : trace["traceEvents"])
    if (e["ph"] == "X" && e["pid"] == pid)
      spans.push_back({e["name"], e["ts"].get<double>(), e["ts"].get<double>() + e["dur"].get<double>(),
                       e.value("args", json::object())});
  std::stable_sort(spans.begin(), spans.end(), [](const Span& a, const Span& b) { return a.begin < b.begin; });
  return spans;
}

constexpr double kMicro = 1e-3;  // rounding of microseconds written as doubles: far below this

// Device spans of one device: one after the other, none overlapping, each run's adding up
// to the time from its first start to its last end, and inside the host's window from
// that program's submit to the end of its wait (the track starts at the submit by
// construction; the device cannot finish after the wait returned), within the timer's
// resolution.
void expect_device_track(const std::vector<Span>& device, const std::vector<Span>& host, double resolution_us) {
  ASSERT_FALSE(device.empty());
  std::map<int, std::vector<const Span*>> by_program;
  for (std::size_t i = 0; i < device.size(); ++i) {
    if (i > 0) {
      EXPECT_GE(device[i].begin, device[i - 1].end - kMicro) << device[i].name << " overlaps the one before";
    }
    by_program[device[i].args["program"].get<int>()].push_back(&device[i]);
  }
  for (const auto& [program, spans] : by_program) {
    double sum = 0;
    for (const Span* s : spans) sum += s->end - s->begin;
    EXPECT_NEAR(sum, spans.back()->end - spans.front()->begin, kMicro) << "spans of program " << program;
    double submit = 0, wait_end = 0;
    for (const Span& h : host)
      if (h.args.value("program", -1) == program) {
        if (h.name == "submit") submit = h.begin;
        if (h.name == "wait") wait_end = h.end;
      }
    ASSERT_GT(wait_end, 0) << "program " << program << " has no wait on the host";
    ASSERT_GT(submit, 0) << "program " << program << " has no submit on the host";
    EXPECT_LE(spans.back()->end, wait_end + resolution_us) << "device time beyond the host's wait";
  }
}

TEST(GraphProfiler, TracesTheChosenStepsWithKernelsNamedByGraphNodes) {
  const std::string dir = temp_dir("profiler");
  train::TrainConfig config = tiny_config(4, 2);
  config.logger_dir = dir;
  auto profiler = std::make_shared<callbacks::GraphProfiler>(callbacks::GraphProfilerOptions{{2, 7}, "", 5});
  config.callbacks = {profiler};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(profiler->written(),
            (std::vector<std::string>{dir + "/chrome-trace-2.json", dir + "/chrome-trace-7.json"}));

  const json trace = read_json(dir + "/chrome-trace-7.json");
  expect_trace_format(trace);
  const std::vector<Span> host = spans_of(trace, 1), dev = spans_of(trace, 2);
  ASSERT_FALSE(host.empty());
  EXPECT_EQ(host[0].name, "step 7");
  for (std::size_t i = 1; i < host.size(); ++i) {  // feed, submit, wait: inside the step, one after another
    EXPECT_GE(host[i].begin, host[0].begin - kMicro) << host[i].name;
    EXPECT_LE(host[i].end, host[0].end + kMicro) << host[i].name;
    if (i > 1) {
      EXPECT_GE(host[i].begin, host[i - 1].end - kMicro) << host[i].name;
    }
  }
  const double resolution_us = std::max(1.0, trainer.device().limits().timestamp_period_ns * 1e-3);
  expect_device_track(dev, host, resolution_us);

  // Every device span is a node of the graph; the kernels are the step program's dispatches.
  std::size_t kernels = 0;
  double device_us = 0;
  for (const Span& s : dev) {
    EXPECT_NO_THROW(trainer.graph().find(s.name)) << s.name << " is no graph node";
    device_us += s.end - s.begin;
  }
  for (const json& e : trace["traceEvents"]) kernels += e.value("cat", "") == "kernel";
  std::vector<std::size_t> dispatches;  // of the programs that ran
  for (const callbacks::StepProgram& p : trainer.step_programs())
    if (!p.program->host_spans().since({}).empty()) dispatches.push_back(p.program->dispatch_count());
  EXPECT_EQ(dispatches, std::vector<std::size_t>{kernels});

  // The op table: device time by node, the step's total beside it.
  const callbacks::Monitors& monitors = trainer.monitors();
  EXPECT_NEAR(monitors.get_latest("GraphProfiler/device_ms") * 1e3, device_us, 1.0);
  EXPECT_GE(monitors.get_latest("GraphProfiler/step_ms") * 1e3, device_us);
  std::filesystem::remove_all(dir);
}

TEST(GraphProfiler, NothingIsTimedWithoutAProfiler) {
  train::SimpleTrainer plain(device());
  train::launch_train_with_config(tiny_config(2, 1), plain);
  ASSERT_FALSE(plain.step_programs().empty());
  for (const callbacks::StepProgram& p : plain.step_programs()) EXPECT_FALSE(p.program->plan().timed);

  train::TrainConfig config = tiny_config(2, 1);
  config.callbacks = {std::make_shared<callbacks::DeviceUtilizationTracker>()};
  train::SimpleTrainer timed(device());
  train::launch_train_with_config(std::move(config), timed);
  for (const callbacks::StepProgram& p : timed.step_programs()) EXPECT_TRUE(p.program->plan().timed);
  // Busy time over wall time, both on one clock: a share.
  const double utilization = timed.monitors().get_latest("DeviceUtilization/0");
  EXPECT_GT(utilization, 0);
  EXPECT_LE(utilization, 100);

  // Trained on without the tracker: what runs is untimed again.
  const auto again = std::chrono::steady_clock::now();
  train::TrainOptions on;
  on.starting_epoch = on.max_epoch = 2;
  timed.train(on);
  int ran = 0;
  for (const callbacks::StepProgram& p : timed.step_programs())
    if (!p.program->host_spans().since(again).empty()) {
      ++ran;
      EXPECT_FALSE(p.program->plan().timed);
    }
  EXPECT_GT(ran, 0);
}

TEST(GraphProfiler, WantsADirectory) {
  train::TrainConfig config = tiny_config(2, 1);
  config.callbacks = {std::make_shared<callbacks::GraphProfiler>()};
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("logger_dir"), std::string::npos) << e.what();
  }
}

// Two towers: one process per device in the trace, each with its own programs' kernels.
TEST(GraphProfiler, TracesEveryTowerOnItsDevice) {
  const std::string dir = temp_dir("profiler-towers");
  train::TrainConfig config = tiny_config(3, 1);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::GraphProfiler>()};
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
  train::launch_train_with_config(std::move(config), trainer);
  std::vector<std::string> traces;
  for (const auto& entry : std::filesystem::directory_iterator(dir))
    if (entry.path().filename().string().starts_with("chrome-trace-")) traces.push_back(entry.path().string());
  ASSERT_EQ(traces.size(), 1u) << "the second step of the one epoch";
  const json trace = read_json(traces[0]);
  expect_trace_format(trace);
  const std::vector<Span> host = spans_of(trace, 1);
  const double resolution_us = std::max(1.0, trainer.device().limits().timestamp_period_ns * 1e-3);
  for (int pid : {2, 3}) {
    SCOPED_TRACE("device process " + std::to_string(pid));
    expect_device_track(spans_of(trace, pid), host, resolution_us);
  }
  EXPECT_TRUE(spans_of(trace, 4).empty()) << "two devices";
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
