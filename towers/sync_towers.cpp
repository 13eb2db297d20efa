#include "towers/sync_towers.h"

#include <chrono>

#include "core/error.h"
#include "towers/host_master.h"
#include "towers/internal/replicas.h"

namespace vkp::towers {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

SyncTowers::SyncTowers(Reduction own, std::vector<vk::Device*> devices, const BuildFn& build,
                       const OptimizerFn& optimizer, TowerOptions options)
    : Towers(own, std::move(devices), build, optimizer, std::move(options)) {
  for (const std::string& name : trainable_names())
    averaged_.emplace_back(DType::f32, Shape(graph(0).find_variable(name).type().dims));
}

double SyncTowers::run_step(const Step& request) {
  Replicas& r = replicas();
  // Every strategy: a hyperparameter may act in forward (a dropout rate), not only in updates.
  r.broadcast_hyperparameters();
  if (host_master()) host_step_ = master("step").read_step(request.global_step);
  current_ = request.objective;

  StepTimes& times = this->times();
  times = {};
  auto start = Clock::now();
  const double total = submit_gradients(request);
  if (!request.next.empty()) stage_next(request.next);
  exchange_values(total);
  const double cost = reduce_gradients(total);
  times.compute = seconds_since(start) - times.reduce;

  start = Clock::now();
  apply(request.global_step);
  for (int k = 0; k < size(); ++k) r.set_step(k, request.global_step + 1);
  times.apply = seconds_since(start);

  const Part& first = r.part(0, current_);
  request.fetched.resize(request.fetches.size());
  for (std::size_t i = 0; i < request.fetches.size(); ++i)
    request.fetched[i] = first.outputs[1 + first.gradients.size() + i];
  return cost;
}

// Forward and backward everywhere at once: every tower's gradient program submitted (the
// results are waited for by reduce_gradients, bucket by bucket with bucket_bytes).
double SyncTowers::submit_gradients(const Step& request) {
  Replicas& r = replicas();
  const auto n = static_cast<std::size_t>(size());
  samples_.resize(n);
  started_.resize(n);
  double total = 0;
  for (std::size_t k = 0; k < n; ++k) {
    const int tower = static_cast<int>(k);
    const std::vector<Array>& batch = request.batches[k];
    graph::Program& p = r.gradient_program(tower, current_, request.run_updates, batch,
                                           k == 0 ? request.fetches : std::vector<graph::Tensor>{});
    started_[k] = Clock::now();  // after a compile, if there was one
    samples_[k] = static_cast<double>(batch_rows(batch));
    total += samples_[k];
    Part& part = r.part(tower, current_);
    on_tower(tower, [&] {
      const int variant = part.stager.prepare(p, batch);
      r.set_step(tower, request.global_step);
      session(tower).submit_program(p, variant);
    });
    part.next_segment = 0;
  }
  weights_.resize(n);
  for (std::size_t k = 0; k < n; ++k) weights_[k] = static_cast<float>(samples_[k] / total);
  return total;
}

// While this step's gradient programs run: the next batches into the other input
// buffers, which the next step submits.
void SyncTowers::stage_next(std::span<const std::vector<Array>> next) {
  for (int k = 0; k < size(); ++k) {
    Part& p = replicas().part(k, current_);
    p.stager.stage(*p.program, next[static_cast<std::size_t>(k)], "tower " + std::to_string(k));
  }
}

void SyncTowers::write_feeds(int k, std::span<const int> variables) {
  graph::Program& program = replicas().apply_program(k, current_);
  for (int i : variables)
    program.write_feed(static_cast<std::size_t>(replicas().layout().position(current_, i)),
                       averaged_[static_cast<std::size_t>(i)], 0);
}

void SyncTowers::apply_feeds(int first, int last, std::uint64_t global_step) {
  Replicas& r = replicas();
  for (int k = first; k <= last; ++k)
    on_tower(k, [&] {
      r.set_step(k, global_step);
      session(k).submit_program(r.apply_program(k, current_), 0);
    });
  for (int k = first; k <= last; ++k)
    on_tower(k, [&] { session(k).wait_program(*r.part(k, current_).apply_program, r.at(k).none); });
}

ReplicatedTowers::ReplicatedTowers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
                                   TowerOptions options)
    : SyncTowers(Reduction::replicated, std::move(devices), build, optimizer, std::move(options)) {}

void ReplicatedTowers::use_averages(std::span<const int> variables) {
  for (int k = 0; k < size(); ++k) write_feeds(k, variables);
}

void ReplicatedTowers::apply(std::uint64_t global_step) { apply_feeds(0, size() - 1, global_step); }

ParameterServerTowers::ParameterServerTowers(std::vector<vk::Device*> devices, const BuildFn& build,
                                             const OptimizerFn& optimizer, TowerOptions options)
    : SyncTowers(Reduction::parameter_server, std::move(devices), build, optimizer, std::move(options)) {}

void ParameterServerTowers::use_averages(std::span<const int> variables) {
  if (host_master())
    master("use_averages").apply(objective(), variables, host_step(), averaged());
  else
    write_feeds(0, variables);
}

void ParameterServerTowers::apply(std::uint64_t global_step) {
  if (host_master()) {
    replicas().send_parameters(master("apply").values(), 0);
    return;
  }
  // The master on tower 0 applies what its gradient feeds hold, and sends the result on.
  apply_feeds(0, 0, global_step);
  if (size() > 1) replicas().send_parameters(replicas().read_sent(), 1);
}

}  // namespace vkp::towers
