// The towers' graphs and sessions, which every strategy (sync_towers.h, async_towers.h)
// shares: tower k is the tower function's graph built in a Graph of its own on
// devices[k], with its gradients, the placeholders and apply ops the strategy needs, and
// a Session there; Replicas builds them, checks that they agree, and compiles and keeps
// their programs. Internal to towers/.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/array.h"
#include "core/error.h"
#include "engine/graph/feed_stager.h"
#include "engine/graph/grad_proc.h"
#include "engine/graph/graph.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/session.h"
#include "towers/towers.h"

namespace vkp::towers {

// One objective's gradients and programs in one tower (a single-cost tower has one).
struct Part {
  graph::Tensor cost;
  std::vector<graph::Tensor> gradients;        // by variable of the objective
  std::vector<graph::Tensor> gradient_inputs;  // where applying towers take gradients
  std::vector<graph::Tensor> apply_ops;
  // The compiled gradient program and what it was compiled for.
  graph::Program* program = nullptr;
  std::vector<std::vector<std::int64_t>> fed_dims;
  std::vector<int> fetch_ids;
  bool with_updates = true;
  // With buckets: the segment of `program` that delivers each trainable variable's
  // gradient (-1: not this objective's), and the next segment to wait for in this step.
  std::vector<int> segment_of;
  int next_segment = 0;
  graph::Program* apply_program = nullptr;
  // With loss scaling: the scale the objective's gradients are taken with.
  graph::Tensor scale;
  // Cost, the objective's gradients, the extra fetches, then with ReplicaPlan::fetch_scale
  // the scale (Replicas::scale_of).
  std::vector<Array> outputs;
  graph::FeedStager stager;    // staging_buffers = 2
};

struct Replica {
  std::unique_ptr<graph::Graph> graph;
  std::unique_ptr<graph::Session> session;
  Tower tower;
  std::vector<Part> parts;             // by objective
  std::vector<graph::Tensor> updates;  // update ops (BatchNorm averages)
  // Where the parameters are sent (parameter server, async): what is sent (every
  // trainable variable, then with loss scaling each objective's scale, good steps and
  // skipped steps), placeholders for each and the assigns from them, compiled into
  // receive_program, so that a tower receives all its parameters in one submission
  // (host-visible input buffers, one command buffer of copies) rather than one staging
  // allocation and submission per variable.
  std::vector<graph::Tensor> sent;
  std::vector<graph::Tensor> parameter_inputs;
  std::vector<graph::Tensor> assigns;
  graph::Program* receive_program = nullptr;
  // Tower 0 with its master on the device: everything sent, fetched at once.
  graph::Program* read_program = nullptr;
  std::vector<Array> outputs_of_read;
  std::vector<Array> none;
};

// What a strategy asks of the replicas it builds.
struct ReplicaPlan {
  std::uint64_t seed = 0;
  bool every_tower_applies = true;   // replicated; otherwise only tower 0 has apply ops
  bool receives_parameters = false;  // parameter server and async
  std::optional<graph::LossScaleOptions> loss_scale;
  int staging_buffers = 1;
  std::size_t bucket_bytes = 0;
  // With loss_scale: every gradient program fetches the scale it used last (synchronous
  // towers, whose gradient processors see the unscaled averages).
  bool fetch_scale = false;
};

// The trainable variables of the towers, in the order gradients are reduced, and each
// objective's share of them.
class VariableLayout {
 public:
  VariableLayout() = default;
  // `objective_vars`: by objective, indices into `names`.
  VariableLayout(std::vector<std::string> names, std::vector<std::vector<int>> objective_vars);

  const std::vector<std::string>& names() const { return names_; }
  int objective_count() const { return static_cast<int>(objective_vars_.size()); }
  const std::vector<int>& objective_variables(int o) const { return objective_vars_.at(static_cast<std::size_t>(o)); }
  // Where trainable variable i sits in objective o's gradients (-1: not there).
  int position(int o, int i) const { return position_[static_cast<std::size_t>(o)][static_cast<std::size_t>(i)]; }

 private:
  std::vector<std::string> names_;
  std::vector<std::vector<int>> objective_vars_;
  std::vector<std::vector<int>> position_;  // by objective and variable: index in the objective, or -1
};

class Replicas {
 public:
  // Error(invalid_argument) when towers differ in their trainable variables (names,
  // types or order), naming the first difference.
  Replicas(std::vector<vk::Device*> devices, const Towers::BuildFn& build, const Towers::OptimizerFn& optimizer,
           ReplicaPlan plan);

  int size() const { return static_cast<int>(replicas_.size()); }
  Replica& at(int k) { return *replicas_.at(static_cast<std::size_t>(k)); }
  graph::Graph& graph(int k) { return *at(k).graph; }
  graph::Session& session(int k) { return *at(k).session; }
  const Tower& tower(int k) const { return replicas_.at(static_cast<std::size_t>(k))->tower; }
  Part& part(int k, int objective) { return at(k).parts[static_cast<std::size_t>(objective)]; }

  // Tower 0's trainable variables, which every tower has (checked).
  const VariableLayout& layout() const { return layout_; }
  // Tower k's output holding its gradient of trainable variable i in objective o.
  Array& gradient_output(int k, int o, int i) {
    return part(k, o).outputs[1 + static_cast<std::size_t>(layout_.position(o, i))];
  }
  graph::OptimizerKind optimizer_kind() const { return kind_; }
  // The optimizer's gradient processors, which the strategies apply on the host.
  const std::vector<graph::GradProcPtr>& processors() const { return processors_; }
  // The processors' host forms on `gradients` (by trainable variable) of `variables`.
  // Gradients of loss_scale * cost are divided by it first and multiplied again after
  // (exact for the powers of two a scale takes), so that the processors see the true
  // ones, as minimize_with_loss_scaling's do on one device.
  void process_on_host(std::span<const int> variables, std::span<Array> gradients, float loss_scale = 1.0f);

  void broadcast_variables(int from);
  void broadcast_hyperparameters();
  void set_timestamps(bool on);
  void discard_staged();
  void follow_global_step(const std::shared_ptr<const graph::StepClock>& clock);
  // Tower k's session at `step`, unless the sessions follow a counter.
  void set_step(int k, std::uint64_t step);

  // Tower k's gradient program of objective o (with the update ops when `updates`) for
  // this batch's shapes and these fetches, compiled the first time.
  graph::Program& gradient_program(int k, int o, bool updates, const std::vector<Array>& batch,
                                   const std::vector<graph::Tensor>& fetches);
  graph::Program& apply_program(int k, int o);
  // With ReplicaPlan::fetch_scale, after tower k's gradient program of objective o ran:
  // the loss scale it used.
  float scale_of(int k, int o) { return part(k, o).outputs.back().data<float>()[0]; }
  // Submits the program that assigns `values` (as Replica::sent) to tower k.
  void receive_parameters(int k, std::span<const Array> values);
  // `values` into towers first .. size() - 1, all at once, then waits for each.
  void send_parameters(std::span<const Array> values, int first);
  // Tower 0's values of what is sent (Replica::sent), fetched at once.
  std::span<const Array> read_sent();

 private:
  void add_replica(int k, vk::Device& device, const Towers::BuildFn& build, const Towers::OptimizerFn& optimizer);
  void check_same_variables(int k, const std::vector<std::string>& names, const std::vector<graph::Tensor>& vars,
                            const std::vector<std::vector<int>>& objective_vars);

  ReplicaPlan plan_;
  std::vector<std::unique_ptr<Replica>> replicas_;
  VariableLayout layout_;
  graph::OptimizerKind kind_ = graph::OptimizerKind::sgd;
  std::vector<graph::GradProcPtr> processors_;
  bool follows_clock_ = false;
};

// Runs fn, naming tower k in an Error it throws (towers may be VkDevices of one physical
// device, whose label alone does not tell them apart).
template <class Fn>
void on_tower(int k, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    throw Error(e.code(), "tower " + std::to_string(k) + ": " + e.what());
  }
}

}  // namespace vkp::towers
