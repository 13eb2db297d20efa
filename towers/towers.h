// Towers: one tower function replicated over several Vulkan devices for data-parallel
// training (tensorpack's multi-GPU trainers and their graph builders, docs/design.md
// section 5). Tower k is the tower function's graph built in a Graph of its own on
// devices[k] (which may be another VkDevice on the same physical device) and run by a
// Session there; every tower takes its own batch. How gradients become updates is the
// strategy, one class each:
//   ReplicatedTowers       (sync_towers.h) every tower computes its gradients, the host
//                          averages them weighted by batch size in a fixed order, and
//                          every tower applies the average to its own variables (the same
//                          update everywhere, so the copies stay equal)
//   ParameterServerTowers  (sync_towers.h) the same average applied once to a master
//                          copy of the variables and optimizer state, on the host
//                          (Master::host, the default) or on tower 0 (Master::device);
//                          every tower receives the new parameters
//   AsyncTowers            (async_towers.h) every tower runs free on a thread of its own:
//                          its gradient (times async_scale) is applied to a host master
//                          as soon as it is ready, without averaging or waiting
//                          (tensorpack's AsyncMultiGPUTrainer)
// and across processes, a synchronous strategy's averages go through
// SyncTowers::set_cross_reduce (mpi_reduce.h). make_towers picks the class from
// TowerOptions::reduction; every combination of options one of them cannot honour is
// refused by one check (check_tower_options) with a message. Variables start from tower
// 0's values (broadcast_variables). A user can drive the towers in a loop of their own;
// the multi-device trainers of train/ do it for them.
//
// The host master holds float arrays of every trainable variable and its optimizer
// slots, updated by host_optimizer.h. Tower 0 still has the slot variables (checkpoints
// read them there) but never updates them: it receives the parameters each step like
// every tower, and its slots only when the master's store_slots() is called. Whoever
// writes tower 0's trainable variables or slots (a restore) calls the master's load()
// before the next step, or the master overwrites the parameters.
#pragma once

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

namespace vkp::vk {
class Device;
}

namespace vkp::towers {

// One of several costs of a tower and the trainable variables it trains (a GAN's
// discriminator loss and the discriminator's variables). Objectives train disjoint sets.
struct Objective {
  graph::Tensor cost;                     // a scalar
  std::vector<graph::Tensor> variables;   // trainable variables of the tower's graph
  // With TowerOptions::loss_scale, the name of this objective's loss scale
  // (graph::loss_scale_state): each objective keeps one. Empty: "loss_scale_<o>".
  std::string loss_scale;
};

// What a tower function built in one tower's graph.
struct Tower {
  std::vector<graph::Tensor> inputs;  // placeholders, fed from that tower's batch
  graph::Tensor cost;                 // a scalar
  // Empty: one objective, `cost` over every trainable variable. Otherwise step() trains
  // one of these at a time (objective i of every tower together); every tower must give
  // the same objectives over the same variables. Synchronous towers without bucket_bytes
  // only.
  std::vector<Objective> objectives;
};

enum class Reduction { replicated, parameter_server, async };
// Where the parameter server's master copy lives. Async always keeps it on the host.
enum class Master { host, device };
Reduction parse_reduction(const std::string& name);  // "replicated", "ps", "async"
const char* to_string(Reduction r);

struct TowerOptions {
  Reduction reduction = Reduction::replicated;  // which class make_towers makes
  // Tower k's graph is seeded seed + k, so that dropout masks differ between towers;
  // initial values come from tower 0 anyway.
  std::uint64_t seed = 0;
  float async_scale = 1.0f;
  // ParameterServerTowers only. host: the devices only compute gradients, and the update
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
  // the next step's batches (StepRequest::next) into the other set while this step
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
  // that move alike (a tower of several objectives keeps a scale for each, see
  // Objective::loss_scale). A parameter server's master on tower 0 moves the scale with its
  // update and sends it on with the parameters; a host master (the parameter server's,
  // async towers') keeps the scale itself, skips, unscales and moves it on the host
  // (each async tower's gradient is one update, skipped alone). Gradient processors see
  // the gradients unscaled, as on one device.
  std::optional<graph::LossScaleOptions> loss_scale;
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

class Replicas;    // internal/replicas.h
class HostMaster;  // host_master.h

// One step of the towers (Towers::step).
struct StepRequest {
  // Tower k is fed batches[k], in the order of its inputs (towers may take different
  // batch sizes).
  std::span<const std::vector<Array>> batches;
  // Async towers number their updates themselves (AsyncTowers::count_updates_from) and
  // ignore it.
  std::uint64_t global_step = 0;
  // Tensors of graph(0) whose values for tower 0's batch land in *fetched; null: none.
  const std::vector<graph::Tensor>* fetches = nullptr;
  std::vector<Array>* fetched = nullptr;
  // With staging_buffers = 2: the following step's batches, written while this step
  // computes (this step's `batches` are ignored when the last step already wrote them as
  // its `next`); they must have this step's shapes. Empty: nothing staged.
  std::span<const std::vector<Array>> next;
  // The objective whose cost's gradients of its variables are averaged and applied; must
  // be given where there are several (a GAN's discriminator, then its generator, on the
  // same batches, staging nothing). The update ops (BatchNorm's moving averages) run with
  // it when `run_updates`.
  std::optional<int> objective;
  bool run_updates = true;
};

// What the trainers use of every strategy.
class Towers {
 public:
  // Builds tower k in graph(k): the placeholders and the cost, under a training
  // TowerContext of index k.
  using BuildFn = std::function<Tower(graph::Graph& graph, int index)>;
  using OptimizerFn = std::function<graph::Optimizer(graph::Graph& graph)>;

  virtual ~Towers();
  Towers(const Towers&) = delete;
  Towers& operator=(const Towers&) = delete;

  Reduction reduction() const { return options_.reduction; }
  int size() const;
  graph::Graph& graph(int k);
  graph::Session& session(int k);
  const Tower& tower(int k) const;
  // The trainable variables, in the order gradients are reduced.
  const std::vector<std::string>& trainable_names() const;
  int objective_count() const;
  // Objective o's trainable variables, as indices into trainable_names().
  const std::vector<int>& objective_variables(int o) const;

  // Every variable of tower `from` (slots and moving averages too) into every other
  // tower that has it.
  void broadcast_variables(int from = 0);

  // The master kept on the host (towers/host_master.h: load, store_slots, value by
  // name), by ParameterServerTowers with Master::host and by AsyncTowers; null for the
  // others.
  HostMaster* host_master() { return master_.get(); }
  const HostMaster* host_master() const { return master_.get(); }

  // One step of objective 0 with its update ops at `global_step`, fetching nothing:
  // step({.batches = batches, .global_step = global_step}).
  double step(std::span<const std::vector<Array>> batches, std::uint64_t global_step);
  // One step (StepRequest). Returns the cost averaged over the towers weighted by batch
  // size. A steady loop allocates nothing here.
  double step(const StepRequest& request);
  const StepTimes& last_times() const { return times_; }

  // Forgets the batches written ahead by the last step's `next` (staging_buffers = 2):
  // the next step writes its own. A trainer that cut the staged batches again calls it.
  void discard_staged();
  // Whether the towers' programs time every kernel and copy (graph::Session::
  // set_timestamps); a change drops the programs held, to be compiled again.
  void set_timestamps(bool on);

  // Tower 0's hyperparameter, which every tower (and the host master) uses; a step
  // broadcasts it.
  virtual float hyperparameter(const std::string& name);
  virtual void set_hyperparameter(const std::string& name, float value);
  // Every tower's session reads the global step from `clock` (a trainer's, whose time
  // step() is then given) instead of step() setting it; nullptr: step() sets it again.
  virtual void follow_global_step(std::shared_ptr<const graph::StepClock> clock);

  // The optimizer's gradient processors (apply_grad_processors), which the towers apply
  // on the host: to the averaged gradients of every synchronous step (after the reduction
  // across processes), and to each asynchronous tower's gradient. A trainer takes their
  // summaries.
  const std::vector<graph::GradProcPtr>& processors() const;

 protected:
  // Builds the replicas for `own` strategy after check_tower_options, broadcasts tower
  // 0's variables, and sets up the host master where the strategy keeps one.
  Towers(Reduction own, std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
         TowerOptions options);

  // A step() checked: the objective chosen, fetches and fetched never null.
  struct Step {
    int objective = 0;
    bool run_updates = true;
    std::span<const std::vector<Array>> batches;
    std::span<const std::vector<Array>> next;
    std::uint64_t global_step = 0;
    const std::vector<graph::Tensor>& fetches;
    std::vector<Array>& fetched;
  };
  virtual double run_step(const Step& step) = 0;

  const TowerOptions& options() const { return options_; }
  Replicas& replicas() { return *replicas_; }
  // The host master, where the caller `what` needs one: Error(invalid_argument) without.
  HostMaster& master(const char* what) const;
  StepTimes& times() { return times_; }

 private:
  TowerOptions options_;
  std::unique_ptr<Replicas> replicas_;
  std::unique_ptr<HostMaster> master_;
  StepTimes times_;
};

// Error(unsupported) or Error(invalid_argument), naming the options, for every
// combination that `options.reduction`'s strategy does not honour.
void check_tower_options(const TowerOptions& options);

// The strategy of options.reduction: ReplicatedTowers, ParameterServerTowers or AsyncTowers.
// Error(invalid_argument) when towers differ in their trainable variables (names, types
// or order), naming the first difference.
std::unique_ptr<Towers> make_towers(std::vector<vk::Device*> devices, const Towers::BuildFn& build,
                                    const Towers::OptimizerFn& optimizer, TowerOptions options = {});

}  // namespace vkp::towers
