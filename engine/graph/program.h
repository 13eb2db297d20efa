// Program: a graph compiled for one device and one set of feeds, fetches and targets:
// a schedule, a static memory plan, and one recording of every kernel, replayed by
// run(). Per run the host only writes feeds, submits, waits and reads fetches.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/feed_checks.h"
#include "engine/graph/graph.h"
#include "engine/graph/host_spans.h"
#include "engine/graph/memory_plan.h"
#include "engine/graph/program_exchanges.h"
#include "engine/graph/program_feeds.h"
#include "engine/graph/program_fetches.h"
#include "engine/graph/variable_store.h"
#include "engine/vk/recording.h"

namespace vkp::graph {

// Fetches wanted as soon as they are computed, before the rest of the program has run
// (Towers reduces gradients this way while backward goes on, docs/design.md section 5).
// `fetches` (indices into compile's fetches) are packed, in the order the schedule
// computes them, into buckets of at least `bucket_bytes` (the last may hold less); the
// recording is cut into one command buffer per bucket, each ending right after the
// node that computes its bucket's last tensor, plus a tail with the rest of the
// program. Empty: one command buffer, as without segments.
struct FetchSegments {
  std::vector<int> fetches;
  std::size_t bucket_bytes = 0;
  bool empty() const { return fetches.empty() && bucket_bytes == 0; }
};

struct CompileOptions {
  std::string name = "program";
  bool timestamps = false;  // per-kernel device times (Program::kernel_times)
  // Copies of the input buffers, each with its own recording of the whole step: with
  // 2, the host writes the next step's feeds into one while the other runs
  // (StagingInput).
  int variants = 1;
  FetchSegments segments;
  // A matmul and the elementwise ops only it feeds as one dispatch (fusion.h).
  bool fuse = true;
  // Intermediate float tensors kept as float16 where every kernel touching them can
  // (f16_storage.h); without the device's storageBuffer16BitAccess they are packed two
  // halves to a 32-bit word (shaders/f16_storage.glsl), the same bytes.
  bool f16_storage = false;
};

// What compile() decided for a program.
struct ProgramPlan {
  std::vector<int> schedule;  // node ids in execution order
  MemoryPlan memory;
  // Planned tensors kept as float16 (CompileOptions::f16_storage), and their bytes.
  int f16_tensors = 0;
  std::uint64_t f16_bytes = 0;
  bool updates_variables = false;
  // Device times per kernel are taken (CompileOptions::timestamps, where the device has
  // timestamps): Program::kernel_times.
  bool timed = false;
};

class Program {
 public:
  // Writes `feeds` (in compile's order; dtype and shape must be the compiled ones; a feed
  // that a gather reads as indices must hold indices in range, Error naming the op),
  // replays the recording and copies each fetch into outputs[i] (reallocated only when
  // its shape changes: a steady training loop allocates nothing here).
  void run(std::span<const Array> feeds, std::vector<Array>& outputs);

  // The same in parts, for overlapping the host with the device: write the feeds of a
  // variant's input buffers (never those of a submitted, unfinished run), submit that
  // variant (after the previous submission has finished), wait for it and read fetches.
  void write_feeds(std::span<const Array> feeds, int variant = 0);
  // Feed `index` alone (Towers writes averaged gradients bucket by bucket).
  void write_feed(std::size_t index, const Array& value, int variant = 0);
  void submit(int variant = 0);
  // Blocks until the run submitted last, if it has not been waited for, is done on the
  // device (its fetches stay for wait()): the session calls it before it writes the
  // scalar words (global step, hyperparameters) that the next run reads.
  void await_device();
  // Waits for the whole run; copies into `outputs` the fetches that wait_segment has
  // not already delivered into it during this run.
  void wait(std::vector<Array>& outputs);
  int variants() const { return static_cast<int>(recordings_.size()); }
  // With several variants, staged memory and a device transfer queue, each variant's
  // feeds are copied to the device by a recording of their own on the transfer queue,
  // submitted as soon as write_feeds has written them, so that the upload of the next
  // step's inputs overlaps the current step (StagingInput); the step waits for it on
  // the device.
  bool feeds_on_transfer_queue() const { return feeds_.on_transfer_queue(); }

  // Segments (CompileOptions::segments): bucket s is computed by command buffer s,
  // which signals the device timeline when done. wait_segment(s) blocks until then and
  // copies bucket s's fetches into outputs[i] (outputs sized like the fetches) while
  // the later segments of the submitted run go on; wait() then completes `outputs`.
  int segment_count() const { return fetches_.bucket_count(); }
  // The fetch indices of bucket s, in the order the program computes them.
  const std::vector<int>& segment_fetches(int s) const { return fetches_.bucket(s); }
  void wait_segment(int s, std::vector<Array>& outputs);
  // Whether the submitted run has completed, without waiting (true when none is, false
  // while it is stopped at an exchange).
  bool finished() const;

  // Exchanges: the program's cross_tower_mean nodes, in the order it computes them. A
  // submitted run stops after computing exchange e's input; wait_exchange(e) blocks
  // until then and copies that input into `value`; resume_exchange(e) writes the node's
  // value (the towers' mean, the input's type) and submits the run's next part. They go
  // in order, each once per run. wait() completes the ones not resumed with their own
  // input (a program run alone is its only tower); await_device() refuses a run stopped
  // at one. Segments after an exchange can be waited for once it is resumed.
  int exchange_count() const { return exchanges_.count(); }
  void wait_exchange(int e, Array& value);
  void resume_exchange(int e, const Array& value);

  const std::vector<FeedSpec>& feeds() const { return feeds_.checks().specs(); }
  const ProgramPlan& plan() const { return plan_; }
  std::size_t dispatch_count() const;
  // Device time per kernel and copy of the last run, each named by the graph node it
  // computes (a fused chain by its last node; feeds and fetches by their tensors), with
  // begin_ns counted from the run's first timestamp; needs CompileOptions::timestamps.
  std::vector<vk::KernelTime> kernel_times() const;
  // The host calls of the recent runs (HostSpanLog::since).
  const HostSpanLog& host_spans() const { return host_spans_; }

 private:
  friend class ProgramBuilder;  // compile()'s stages, in compile.cpp
  Program() = default;
  // Submits the pending run's part `part`: its recordings from the one after exchange
  // part - 1 to the one ending exchange `part` (the last, after every exchange).
  void submit_part(int part, std::uint64_t after_feeds);

  ProgramPlan plan_;
  ProgramFetches fetches_;
  ProgramExchanges exchanges_;
  HostSpanLog host_spans_;
  int pending_ = -1;  // the submitted variant not yet waited for
  int last_variant_ = 0;
  // Declared before the recordings, which refer to their buffers.
  std::unique_ptr<vk::Arena> activations_, constants_, inputs_, upload_, readback_, exchange_in_, exchange_out_;
  // By variant: one recording, or one per part (cut after each bucket and each exchange)
  // then the tail; and the same as pointers, for submit_in_order.
  std::vector<std::vector<std::unique_ptr<vk::Recording>>> recordings_;
  std::vector<std::vector<vk::Recording*>> in_order_;
  ProgramFeeds feeds_;  // after the arenas: its upload recordings read upload_
};

// What compile() builds: `fetches` and `targets` (side effects, run after what they
// depend on) of `graph`, fed `feeds`.
struct ProgramRequest {
  const Graph& graph;
  const std::vector<FeedSpec>& feeds;
  const std::vector<Tensor>& fetches;
  const std::vector<Tensor>& targets;
};
// Where the program runs: on `device`, with the session's `variables` and scalar buffer.
struct ProgramHome {
  vk::Device& device;
  VariableStore& variables;
  const vk::BufferSlice& scalars;
};

// Compiles `what` to run `where`. Throws Error naming the node when a shape does not fit,
// a needed placeholder is not fed, or a tensor exceeds the device's per-binding range.
std::unique_ptr<Program> compile(const ProgramRequest& what, const ProgramHome& where,
                                 const CompileOptions& options = {});

}  // namespace vkp::graph
