// Towers: one tower function replicated over several Vulkan devices for data-parallel
// training (tensorpack's multi-GPU trainers, docs/design.md section 5). Tower k is the tower
// function's graph built in a Graph of its own on devices[k] (which may be another
// VkDevice on the same physical device) and run by a Session there; every tower takes its
// own batch. A synchronous step computes each tower's gradients, copies them to the host,
// averages them weighted by batch size in a fixed order, and applies the result:
//   replicated        every tower applies the averaged gradients to its own variables
//                     (the same update everywhere, so the copies stay equal)
//   parameter_server  one master copy of the variables and optimizer state applies the
//                     average and every tower receives the new parameters; the master
//                     lives on the host (Master::host, the default) or on tower 0
//                     (Master::device), see below
//   async             every tower runs free on a thread of its own: it receives the
//                     master's parameters as it takes a batch, computes on them, and its
//                     gradient (times async_scale) is applied to the host master as soon
//                     as it is ready, without averaging or waiting for the other towers
//                     (tensorpack's AsyncMultiGPUTrainer); see "Asynchronous towers" below
// Variables start from tower 0's values (broadcast_variables). A user can drive the
// towers in a loop of their own; the multi-device trainers of train/ do it for them.
//
// The host master holds float arrays of every trainable variable and its optimizer
// slots, updated by host_optimizer.h from the averaged gradients (parameter_server) or
// from each tower's gradient (async, which always keeps it on the host). Tower 0 still has the
// slot variables (checkpoints read them there) but never updates them: it receives the
// parameters each step like every tower, and its slots only when store_master_slots()
// is called. Whoever writes tower 0's trainable variables or slots (a restore) calls
// load_master() before the next step, or the master overwrites the parameters.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "towers/host_optimizer.h"

namespace vkp::vk {
class Device;
}

namespace vkp::towers {

// One of several costs of a tower and the trainable variables it trains (a GAN's
// discriminator loss and the discriminator's variables). Objectives train disjoint sets.
struct Objective {
  graph::Tensor cost;                     // a scalar
  std::vector<graph::Tensor> variables;   // trainable variables of the tower's graph
};

// What a tower function built in one tower's graph.
struct Tower {
  std::vector<graph::Tensor> inputs;  // placeholders, fed from that tower's batch
  graph::Tensor cost;                 // a scalar
  // Empty: one objective, `cost` over every trainable variable. Otherwise step() trains
  // one of these at a time (objective i of every tower together); every tower must give
  // the same objectives over the same variables. Not with async or bucket_bytes.
  std::vector<Objective> objectives;
};

enum class Reduction { replicated, parameter_server, async };
// Where the parameter server's master copy lives. Async always keeps it on the host.
enum class Master { host, device };
Reduction parse_reduction(const std::string& name);  // "replicated", "ps", "async"
const char* to_string(Reduction r);

struct TowerOptions {
  Reduction reduction = Reduction::replicated;
  // Tower k's graph is seeded seed + k, so that dropout masks differ between towers;
  // initial values come from tower 0 anyway.
  std::uint64_t seed = 0;
  float async_scale = 1.0f;
  // parameter_server only. host: the devices only compute gradients, and the update
  // overlaps backward with buckets; device: tower 0 applies the update with its
  // optimizer program and sends the parameters on.
  Master master = Master::host;
  // 0: each tower's gradient program runs to completion, then every gradient is
  // averaged (the synchronous path). Otherwise gradients are reduced in buckets of at
  // least this many bytes, in the order backward computes them (late layers first):
  // the host averages a bucket as soon as every tower has computed it, while backward
  // of earlier layers goes on. Both paths give bitwise the same results. Not with async.
  std::size_t bucket_bytes = 0;
  // 2: every tower's gradient program keeps two sets of input buffers, and step() writes
  // the next step's batches (its `next` argument) into the other set while this step
  // runs (StagingInput); the next step then starts without writing its inputs.
  int staging_buffers = 1;
  // async only: a bound on staleness (stale synchronous parallel). A tower starts its next
  // gradient only while it has applied at most this many more updates than the tower
  // that applied fewest; it waits otherwise (AsyncStats::held_seconds). Then a gradient
  // is at most (towers - 1) * (2 * max_lead + 1) updates stale. -1: no bound.
  int async_max_lead = -1;
  // Synchronous only: time each tower's part of every step (tower_seconds()), from
  // writing its batch to its gradients being on the host. The host polls the towers
  // still computing every 100 us and blocks on the last one, so the step is no longer;
  // a trainer that shares the batch by throughput turns it on.
  bool time_towers = false;
  // Mixed precision: every tower keeps activations and gradients as float16
  // (SessionOptions::f16_storage; float32 master weights) and trains with dynamic loss
  // scaling (graph/loss_scale.h): a tower's gradients are of scale * cost, averaged on
  // the host as any, and every tower's update divides the averages by the scale and is
  // skipped when one of them is not finite (one tower's overflow skips the step
  // everywhere); the scale, good steps and skipped steps are variables of every tower
  // that move alike. Replicated reduction, one objective and no gradient processors
  // only (Error(unsupported) otherwise).
  std::optional<graph::LossScaleOptions> loss_scale;
};

// What the asynchronous towers did since the last take_async_stats(), by tower.
struct AsyncStats {
  std::vector<std::uint64_t> updates;         // gradients applied
  std::vector<std::uint64_t> max_staleness;   // updates applied by others between its read and its apply
  std::vector<double> mean_staleness;
  std::vector<double> held_seconds;           // waiting for async_max_lead
};

// The updates applied since the last Towers::progress(): their cost averaged by
// batch size, their samples and count.
struct AsyncProgress {
  double cost = 0;
  double samples = 0;
  std::uint64_t updates = 0;
  std::uint64_t applied = 0;  // the master's update count
};

// Host wall time of the parts of the last step, in seconds; they add up to the step.
struct StepTimes {
  double compute = 0;  // forward and backward on every tower, gradients read back (less `reduce` done meanwhile)
  double reduce = 0;   // averaging on the host, across processes, into the applying towers' inputs or the host master
  // The part of `reduce` after the last bucket of gradients had arrived: what overlap
  // with backward did not hide (all of `reduce` on the synchronous path).
  double exposed_reduce = 0;
  double apply = 0;    // updates applied and parameters distributed
  int buckets = 0;     // gradient buckets averaged (1 on the synchronous path, 0 with async)
};

class Towers {
 public:
  // Builds tower k in graph(k): the placeholders and the cost, under a training
  // TowerContext of index k.
  using BuildFn = std::function<Tower(graph::Graph& graph, int index)>;
  using OptimizerFn = std::function<graph::Optimizer(graph::Graph& graph)>;

  // Error(invalid_argument) when towers differ in their trainable variables (names,
  // types or order), naming the first difference.
  Towers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
         TowerOptions options = {});
  ~Towers();

  int size() const { return static_cast<int>(towers_.size()); }
  Reduction reduction() const { return options_.reduction; }
  graph::Graph& graph(int k);
  graph::Session& session(int k);
  const Tower& tower(int k) const;
  // The trainable variables, in the order gradients are reduced.
  const std::vector<std::string>& trainable_names() const { return names_; }
  int objective_count() const { return static_cast<int>(objective_vars_.size()); }
  // Objective o's trainable variables, as indices into trainable_names().
  const std::vector<int>& objective_variables(int o) const { return objective_vars_.at(static_cast<std::size_t>(o)); }

  // Every variable of tower `from` (slots and moving averages too) into every other
  // tower that has it.
  void broadcast_variables(int from = 0);
  // Tower 0's hyperparameters into the other towers that have them.
  void broadcast_hyperparameters();

  // Whether the master lives on the host (parameter_server with Master::host, or async).
  bool host_master() const;
  // Host master only, else Error(invalid_argument). load_master: tower 0's trainable
  // variables and slots into the master. store_master_slots: the master's slots into
  // tower 0 (its trainable variables are current after every step). master_value: the
  // master's copy of a trainable variable or slot, by name.
  void load_master();
  void store_master_slots();
  const Array& master_value(const std::string& name) const;
  // Whether the host master holds a trainable variable or slot of this name.
  bool master_holds(const std::string& name) const;

  // One step at `global_step`: tower k is fed batches[k] (in the order of its inputs;
  // towers may take different batch sizes). Async towers number their updates
  // themselves (count_updates_from) and ignore `global_step`. `fetches` are tensors of graph(0) whose
  // values for tower 0's batch land in `fetched`. Returns the cost averaged over the
  // towers weighted by batch size. A steady loop allocates nothing here.
  double step(std::span<const std::vector<Array>> batches, std::uint64_t global_step,
              const std::vector<graph::Tensor>& fetches, std::vector<Array>& fetched);
  // With staging_buffers = 2: `batches` are this step's (ignored when the last step
  // already wrote them as its `next`), `next` the following step's, written while this
  // step computes; they must have this step's shapes. An empty `next` stages nothing.
  double step(std::span<const std::vector<Array>> batches, std::span<const std::vector<Array>> next,
              std::uint64_t global_step, const std::vector<graph::Tensor>& fetches, std::vector<Array>& fetched);
  double step(std::span<const std::vector<Array>> batches, std::uint64_t global_step);
  // A step of objective `objective` alone: its cost's gradients of its variables,
  // averaged and applied; the update ops (batch norm's moving averages) run with it when
  // `run_updates`. The step()s above are objective 0's with the update ops. A GAN's step
  // is its discriminator's objective, then its generator's on the same batches.
  double step(int objective, bool run_updates, std::span<const std::vector<Array>> batches,
              std::uint64_t global_step, const std::vector<graph::Tensor>& fetches, std::vector<Array>& fetched);

  const StepTimes& last_times() const { return times_; }
  // With TowerOptions::time_towers: each tower's seconds in the last synchronous step,
  // from writing its batch to its gradients being ready (with buckets, the host reaches
  // the last wait only after averaging the earlier buckets, which bounds it from below).
  // Empty otherwise.
  const std::vector<double>& tower_seconds() const { return tower_seconds_; }
  // Forgets the batches written ahead by the last step's `next` (staging_buffers = 2):
  // the next step writes its own. A trainer that cut the staged batches again calls it.
  void discard_staged();
  // Whether the towers' programs time every kernel and copy (graph::Session::
  // set_timestamps); a change drops the programs held, to be compiled again.
  void set_timestamps(bool on);

  // --- Asynchronous towers (Reduction::async; Error(invalid_argument) otherwise) ---
  // Threads start with the first batch fed. Tower k's thread takes the next batch (its
  // own queue first, then the shared one), receives the master's parameters and sets
  // its session's global step to the master's update count (dropout masks), computes
  // its gradients, and applies them (times async_scale) to the host master under a
  // lock, as the update numbered by the master's count (Adam's t - 1). A gradient's
  // staleness is the number of updates applied between the two. While the threads run,
  // only the functions of this section may be called; drain() ends that. step() with
  // async is feed(k, batches[k]) for every tower, then drain().
  //
  // A batch for whichever tower is free next; waits while size() batches already wait.
  void feed(std::vector<Array> batch);
  // A batch for tower k (no lead bound applies to it).
  void feed(int k, std::vector<Array> batch);
  // Waits until every batch fed is applied and the threads are idle; then every tower
  // holds the master's parameters and hyperparameters, tower 0 its slots. A thread's
  // error is thrown here (and by feed and progress), naming the tower; the batches no
  // tower had taken are dropped.
  void drain();
  // After an error elsewhere: drops the batches no tower has taken and waits for those
  // in flight, throwing nothing.
  void abandon() noexcept;
  // The cost of the updates applied since the last call (the last update's when none
  // was; before the first one it waits) and, in `fetched`, the latest update's values of
  // the async fetches.
  AsyncProgress progress(std::vector<Array>& fetched);
  // Tensors of graph(0), fetched in every tower's program by node name (the towers are
  // built by one function). Only while drained.
  void set_async_fetches(const std::vector<graph::Tensor>& of_tower_0);
  // The master's update count from here on (a trainer passes global step x towers at
  // the start of an epoch, so that Adam's bias correction goes on after a resume).
  // Only while drained.
  void count_updates_from(std::uint64_t applied);
  AsyncStats take_async_stats();

  // Tower 0's hyperparameter, which every tower and the host master use. While async
  // threads run, a table they read before each gradient; otherwise tower 0's session
  // (step() broadcasts it).
  float hyperparameter(const std::string& name);
  void set_hyperparameter(const std::string& name, float value);

  // Every tower's session reads the global step from `counter` (a trainer's, which
  // step() is then given) instead of step() setting it; nullptr: step() sets it again.
  // Async towers ignore it: their threads number the steps by the master's updates.
  void follow_global_step(const std::int64_t* counter);

  // The optimizer's gradient processors (apply_grad_processors), which the towers apply
  // on the host: to the averaged gradients of every synchronous step (after the reduction
  // across processes; bucketed reduction then feeds the averages after the last bucket),
  // and to each asynchronous tower's gradient. A trainer takes their summaries.
  const std::vector<graph::GradProcPtr>& processors() const { return processors_; }

  // Across processes (DistributedTrainer): called every step with this process's
  // averaged gradients (by trainable variable), its sample count and its mean cost; it
  // must leave in them the same quantities over all processes. Not with async. With
  // buckets it is still called once a step, after the last bucket (gradients of all
  // variables), so bucketing only overlaps the local averaging with backward.
  using CrossReduce = std::function<void(std::span<Array> gradients, double& samples, double& cost)>;
  void set_cross_reduce(CrossReduce reduce);

 private:
  struct Part;
  struct Replica;
  struct Async;  // internal.h

  // The constructor's stages.
  void add_replica(int k, vk::Device& device, const BuildFn& build, const OptimizerFn& optimizer);
  void check_same_variables(int k, const std::vector<std::string>& names, const std::vector<graph::Tensor>& vars,
                            const std::vector<std::vector<int>>& objective_vars);
  // Tower k's part of the objective being stepped, and the output holding its gradient
  // of trainable variable i.
  Part& part(int k);
  Array& gradient_output(int k, int i);
  void set_up_host_master();
  // step()'s stages: the whole step of objective current_, then its parts.
  double step_current(std::span<const std::vector<Array>> next, std::span<const std::vector<Array>> batches,
                      std::uint64_t global_step, const std::vector<graph::Tensor>& fetches, std::vector<Array>& fetched);
  double submit_gradients(std::span<const std::vector<Array>> batches, std::uint64_t global_step,
                          const std::vector<graph::Tensor>& fetches);
  // Writes each tower's next batch into its other input buffers (staging).
  void stage_next(std::span<const std::vector<Array>> next);
  void apply_replicated(std::uint64_t global_step);
  void apply_on_tower_0(std::uint64_t global_step);
  // async.cpp: queueing a batch (k < 0: the shared queue), tower k's thread (its lead
  // bound, its computation, its update of the master), the master's hyperparameters,
  // stopping the threads.
  void enqueue(int k, std::vector<Array> batch);
  void run_async_tower(int k);
  void compute_async(int k, const std::vector<Array>& batch, std::uint64_t read,
                     std::span<const std::pair<std::string, float>> hyper);
  void apply_async(int k, const std::vector<Array>& batch, std::uint64_t read);
  bool within_lead(int k) const;
  void refresh_host_step();
  void stop_async() noexcept;
  double step_async(std::span<const std::vector<Array>> batches, const std::vector<graph::Tensor>& fetches,
                    std::vector<Array>& fetched);
  Async& async(const char* what);
  // Tower k's graph's tensors of these names (fetches of graph(0)).
  std::vector<graph::Tensor> same_in_tower(int k, const std::vector<graph::Tensor>& of_tower_0);
  void apply_host_master(std::span<const int> variables, const HostOptimizerStep& step,
                         std::span<const Array> gradients);
  // Tower k's session at `step`, unless the sessions follow a counter.
  void set_step(int k, std::uint64_t step);

  graph::Program& gradient_program(int k, const std::vector<Array>& batch, const std::vector<graph::Tensor>& fetches);
  graph::Program& apply_program(int k);
  // Whether tower k runs an apply program (its gradient feeds are written).
  bool applies(int k) const { return options_.reduction == Reduction::replicated || (k == 0 && !host_master()); }
  // Waits for every tower's gradients and averages them, bucket by bucket or at once;
  // leaves the averages in averaged_ and in the applying towers' gradient feeds (only
  // after cross_reduce_, where one is set) or applied to the host master. Returns the
  // weighted mean cost.
  double reduce_gradients(std::span<const double> samples, double total);
  void reduce_bucket(std::span<const int> variables, bool write_feeds);
  // Waits for every tower's gradient program; with time_towers, notes when each finished.
  void wait_gradients();
  // The gradient processors' host forms on `gradients` (by trainable variable) of `variables`.
  void process_on_host(std::span<const int> variables, std::span<Array> gradients);
  // The averages of `variables` into the applying towers' gradient feeds, or applied
  // to the host master.
  void use_averages(std::span<const int> variables);
  void submit_apply(int k);
  void send_parameters();  // tower 0's, or the host master's, into the other towers
  // Submits the program that assigns `values` (by trainable variable) to tower k.
  void receive_parameters(int k, std::span<const Array> values);
  void check_host_master(const char* what) const;

  TowerOptions options_;
  std::vector<std::unique_ptr<Replica>> towers_;
  std::vector<std::string> names_;   // trainable variables
  CrossReduce cross_reduce_;
  std::vector<graph::GradProcPtr> processors_;  // the optimizer's, applied on the host
  std::vector<Array> averaged_;      // by variable
  // The host master: by trainable variable its value and its slots (none, m or m and s).
  graph::OptimizerKind kind_ = graph::OptimizerKind::sgd;
  std::vector<Array> master_;
  std::vector<std::vector<Array>> master_slots_;
  std::vector<std::vector<std::string>> slot_names_;
  HostOptimizerStep host_step_;     // this step's hyperparameters
  std::vector<double> samples_;      // this step's batch size of each tower
  std::vector<const float*> inputs_;
  std::vector<float> weights_;
  std::vector<int> all_variables_;  // 0 .. names_.size() - 1
  std::vector<std::vector<int>> objective_vars_;  // by objective, indices into names_
  std::vector<std::vector<int>> position_;        // by objective and variable: index in the objective, or -1
  int current_ = 0;                               // the objective of this step
  bool current_updates_ = true;                   // whether it runs the update ops
  std::vector<int> bucket_;         // variables of the bucket being reduced
  StepTimes times_;
  std::vector<double> tower_seconds_;                       // time_towers
  std::vector<std::chrono::steady_clock::time_point> started_;  // by tower, this step
  bool follows_counter_ = false;  // follow_global_step
  std::unique_ptr<Async> async_;  // async reduction
};

}  // namespace vkp::towers
