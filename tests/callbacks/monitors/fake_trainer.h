// Test doubles for the monitors: a TrainerView whose progress the test sets, a
// temporary logger directory, and a capture of the log.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "file_size_limit.h"
#include "dir_listing.h"
#include "callbacks/monitors.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks::fakes {

using test::FileSizeLimit;

// Progress is plain fields; the graph, variables and predictors are absent (monitors must
// not need them) and throw (predictors as TrainerView's default does: unsupported).
class FakeTrainer : public TrainerView {
 public:
  std::int64_t global_step_ = 0;
  int epoch_num_ = 1;
  int starting_epoch_ = 1;
  int max_epoch_ = 10;
  std::int64_t steps_per_epoch_ = 100;
  std::string logger_dir_;

  // The loop as the fields above say, local_step following the global step.
  const TrainLoop& loop() const override {
    loop_.clock->set(global_step_);
    loop_.epoch_num = epoch_num_;
    loop_.starting_epoch = starting_epoch_;
    loop_.max_epoch = max_epoch_;
    loop_.steps_per_epoch = steps_per_epoch_;
    loop_.local_step = global_step_ % steps_per_epoch_;
    return loop_;
  }
  ModelState& state() override { return state_; }
  Monitors& monitors() override { throw absent("monitors"); }
  const std::string& logger_dir() const override { return logger_dir_; }
  bool is_chief() const override { return true; }
  std::int64_t samples_per_step() const override { return 32; }
  std::vector<std::string> input_names() const override { return {}; }
  graph::Tensor cost() const override { return {}; }

 private:
  static Error absent(const std::string& what) {
    return Error(ErrorCode::not_found, "FakeTrainer has no " + what + "; a monitor must not ask for it");
  }
  // No graph, variables or programs; no device memory.
  struct AbsentState : ModelState {
    graph::Graph& graph() override { throw absent("graph"); }
    float hyperparameter(const std::string&) override { throw absent("hyperparameter"); }
    void set_hyperparameter(const std::string&, float) override { throw absent("hyperparameter"); }
    Array variable(const std::string&) override { throw absent("variable"); }
    std::vector<Array> variable_values(const std::vector<std::string>&) override { throw absent("variable"); }
    void run_targets(const std::vector<graph::Tensor>&) override { throw absent("run_targets"); }
    std::uint64_t device_memory_bytes() const override { return 0; }
    std::uint64_t peak_device_memory_bytes() const override { return 0; }
    std::vector<StepProgram> step_programs() const override { return {}; }
  };

  mutable TrainLoop loop_;
  AbsentState state_;
};

// A fresh directory under the system's temporary directory, removed at the end.
class TempDir {
 public:
  TempDir()
      : path_(std::filesystem::temp_directory_path() /
              ("vkpack_monitors_" + std::to_string(getpid()) + "_" +
               ::testing::UnitTest::GetInstance()->current_test_info()->name())) {
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  ~TempDir() { std::filesystem::remove_all(path_); }

  std::string str() const { return path_.string(); }
  std::string file(const std::string& name) const { return (path_ / name).string(); }
  // Names in the directory, sorted.
  std::vector<std::string> listing() const { return test::sorted_file_names(path_); }

 private:
  std::filesystem::path path_;
};

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

inline void write_file(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// Log lines at or above info, with their time prefix ("[1122 14:03:59] ") removed, while
// alive; stderr stays as it was.
class LogCapture {
 public:
  struct Line {
    LogLevel level;
    std::string text;
  };
  LogCapture() : previous_level_(logger().level()) {
    logger().set_level(LogLevel::info);
    id_ = logger().add_sink([this](LogLevel level, std::string_view line) {
      const std::size_t end = line.find("] ");
      std::string_view text = end == std::string_view::npos ? line : line.substr(end + 2);
      if (level != LogLevel::info) text.remove_prefix(4);  // "WRN ", "ERR ", "DBG "
      lines_.push_back({level, std::string(text)});
    });
  }
  LogCapture(const LogCapture&) = delete;
  LogCapture& operator=(const LogCapture&) = delete;
  ~LogCapture() {
    logger().remove_sink(id_);
    logger().set_level(previous_level_);
  }
  const std::vector<Line>& lines() const { return lines_; }
  std::vector<std::string> texts(LogLevel level) const {
    std::vector<std::string> out;
    for (const Line& l : lines_)
      if (l.level == level) out.push_back(l.text);
    return out;
  }

 private:
  LogLevel previous_level_;
  int id_ = 0;
  std::vector<Line> lines_;
};

}  // namespace vkp::callbacks::fakes
