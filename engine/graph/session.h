// Session: runs a graph on one device. It owns the variables' device storage, the scalar
// buffer (ScalarWords: run counter, global step, hyperparameters) and the programs
// compiled so far, cached by (feeds and their shapes, fetches, targets). Programs handed
// out by program() live as long as the session (their callers keep references); those
// that run() compiles for itself are a bounded cache: beyond
// SessionOptions::cached_programs the least recently run one is released (an evaluation
// that tries many batch sizes does not keep every one's device memory).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/graph/program.h"
#include "engine/graph/program_cache.h"
#include "engine/graph/scalar_words.h"
#include "engine/graph/step_clock.h"
#include "engine/graph/variable_store.h"

namespace vkp::vk {
class Device;
}

namespace vkp::graph {

using Feeds = std::vector<std::pair<Tensor, Array>>;

struct SessionOptions {
  bool timestamps = false;  // compile programs with per-kernel timing
  std::size_t cached_programs = 32;  // run()'s own programs kept at most (at least 1)
  bool fuse = true;  // CompileOptions::fuse: matmuls absorb their bias, residual, activation
  bool f16_storage = false;  // CompileOptions::f16_storage: activations and gradients as float16
};

class Session {
 public:
  Session(Graph& graph, vk::Device& device, SessionOptions options = {});

  // Computes `fetches` and runs `targets` with `feeds`, compiling a program the first
  // time this combination (with these feed shapes) is run.
  std::vector<Array> run(const Feeds& feeds, const std::vector<Tensor>& fetches,
                         const std::vector<Tensor>& targets = {});

  // The program for these feeds (placeholders and the shapes to be fed), fetches and
  // targets; with run_program, a loop that allocates nothing per step.
  // `variants` > 1 double-buffers the feeds (CompileOptions::variants); `segments`
  // delivers some fetches early (CompileOptions::segments, Program::wait_segment).
  Program& program(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                   const std::vector<Tensor>& targets = {}, int variants = 1, const FetchSegments& segments = {});
  // Writes the run counter and global step, runs, and advances them (the global step
  // only when the program updates variables).
  void run_program(Program& program, std::span<const Array> feeds, std::vector<Array>& outputs);
  // run_program in two halves, so that the host can write the other variant's feeds
  // (Program::write_feeds) while the device runs: submit a variant whose feeds are
  // written, then wait for it.
  void submit_program(Program& program, int variant);
  void wait_program(Program& program, std::vector<Array>& outputs);
  // Whether programs compiled from now on time every kernel and copy (SessionOptions::
  // timestamps; a profiler turns it on); programs compiled before stay as they are.
  void set_timestamps(bool on) { options_.timestamps = on; }
  bool timestamps() const { return options_.timestamps; }
  // Programs alive: those program() handed out and those run() keeps cached.
  std::size_t program_count() const { return programs_.size(); }
  std::vector<const Program*> programs() const { return programs_.programs(); }

  // By name (see Graph::hyperparameter); Error(not_found) for unknown names. A
  // hyperparameter starts at the value the graph gave it.
  void set_hyperparameter(const std::string& name, float value);
  float hyperparameter(const std::string& name);
  // The global step the next run writes (dropout masks and Adam read it). A session
  // counts its own, advancing it after each run that updates variables, unless it
  // follows a clock (a trainer's): then it only reads that one, and set_global_step is
  // an Error naming the owner to set instead.
  std::uint64_t global_step() const { return static_cast<std::uint64_t>(step_.now()); }
  void set_global_step(std::uint64_t step) { step_.set(static_cast<std::int64_t>(step)); }
  // Follow `clock`; nullptr: count again, on from the clock's value.
  void follow_global_step(std::shared_ptr<const StepClock> clock) { step_.follow(std::move(clock)); }

  // Variable values by name (VariableStore); variables get storage (and their initial
  // value) the first time a program uses them, or here.
  Array variable(const std::string& name) { return variables_.read(name); }
  void set_variable(const std::string& name, const Array& value) { variables_.write(name, value); }
  // Several at once: one transfer (a single submission where memory is staged).
  std::vector<Array> variable_values(const std::vector<std::string>& names) { return variables_.read(names); }
  void set_variables(const std::vector<std::string>& names, const std::vector<Array>& values) {
    variables_.write(names, values);
  }
  VariableStore& variables() { return variables_; }
  // The scalar buffer programs of this session read (for compile()).
  const vk::BufferSlice& scalars() const { return scalars_.slice(); }

  Graph& graph() { return *graph_; }
  vk::Device& device() { return *device_; }

 private:
  Program& find_or_compile(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                           const std::vector<Tensor>& targets, int variants, const FetchSegments& segments,
                           ProgramCache::Use use);

  Graph* graph_;
  vk::Device* device_;
  SessionOptions options_;
  VariableStore variables_;
  ScalarWords scalars_;
  GlobalStep step_;
  std::uint64_t runs_ = 0;
  ProgramCache programs_;  // last: destroyed before the variables and scalars they use
};

}  // namespace vkp::graph
