// Program: a graph compiled for one device and one set of feeds, fetches and targets:
// a schedule, a static memory plan, and one recording of every kernel, replayed by
// run(). Per run the host only writes feeds, submits, waits and reads fetches.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "vkpack/core/array.h"
#include "vkpack/engine/graph/graph.h"
#include "vkpack/engine/graph/memory_plan.h"
#include "vkpack/engine/graph/variable_store.h"
#include "vkpack/engine/vk/recording.h"

namespace vkp::graph {

struct FeedSpec {
  Tensor placeholder;
  TensorType type;  // concrete: the shape that will be fed
};

struct CompileOptions {
  std::string name = "program";
  bool timestamps = false;  // per-kernel device times (Program::kernel_times)
};

class Program {
 public:
  // Writes `feeds` (in compile's order; dtype and shape must be the compiled ones),
  // replays the recording and copies each fetch into outputs[i] (reallocated only when
  // its shape changes: a steady training loop allocates nothing here).
  void run(std::span<const Array> feeds, std::vector<Array>& outputs);

  const std::vector<TensorType>& fetch_types() const { return fetch_types_; }
  const std::vector<FeedSpec>& feeds() const { return feeds_; }
  const MemoryPlan& memory_plan() const { return plan_; }
  // Node ids in execution order.
  const std::vector<int>& schedule() const { return schedule_; }
  bool updates_variables() const { return updates_variables_; }
  std::size_t dispatch_count() const { return recording_->dispatch_count(); }
  // Device time per kernel of the last run; needs CompileOptions::timestamps.
  std::vector<vk::KernelTime> kernel_times() const { return recording_->kernel_times(); }

 private:
  friend std::unique_ptr<Program> compile(const Graph&, const std::vector<FeedSpec>&, const std::vector<Tensor>&,
                                          const std::vector<Tensor>&, vk::Device&, VariableStore&,
                                          const vk::BufferSlice&, const CompileOptions&);
  Program() = default;

  std::vector<FeedSpec> feeds_;
  std::vector<std::byte*> feed_host_;     // where run() writes each feed
  std::vector<TensorType> fetch_types_;
  std::vector<const std::byte*> fetch_host_;  // where run() reads each fetch
  std::vector<std::string> feed_names_;
  std::vector<int> schedule_;
  MemoryPlan plan_;
  bool updates_variables_ = false;
  // Declared before the recording, which refers to their buffers.
  std::unique_ptr<vk::Arena> activations_, constants_, upload_, readback_;
  std::unique_ptr<vk::Recording> recording_;
};

// Compiles `fetches` and `targets` (side effects, run after what they depend on) of
// `graph` for `device`. Variables come from `variables`; `scalars` is the session's
// scalar buffer. Throws Error naming the node when a shape does not fit, a needed
// placeholder is not fed, or a tensor exceeds the device's per-binding range.
std::unique_ptr<Program> compile(const Graph& graph, const std::vector<FeedSpec>& feeds,
                                 const std::vector<Tensor>& fetches, const std::vector<Tensor>& targets,
                                 vk::Device& device, VariableStore& variables, const vk::BufferSlice& scalars,
                                 const CompileOptions& options = {});

}  // namespace vkp::graph
