// Synchronous towers (towers.h): every step, every tower computes its gradients on its
// batch, the host waits for all of them and averages them weighted by batch size in a
// fixed order (bucket by bucket while backward goes on, with bucket_bytes; across
// processes after that, with set_cross_reduce; through the gradient processors' host
// forms), and the strategy applies the averages:
//   ReplicatedTowers       every tower applies them to its own variables
//   ParameterServerTowers  one master applies them (on the host, or tower 0 with
//                          Master::device) and every tower receives the parameters
// Both paths (buckets or not) give bitwise the same results.
#pragma once

#include <chrono>
#include <functional>
#include <span>
#include <vector>

#include "towers/host_optimizer.h"
#include "towers/towers.h"

namespace vkp::towers {

class SyncTowers : public Towers {
 public:
  // With TowerOptions::time_towers: each tower's seconds in the last step, from writing
  // its batch to its gradients being ready (with buckets, the host reaches the last wait
  // only after averaging the earlier buckets, which bounds it from below). Empty otherwise.
  const std::vector<double>& tower_seconds() const { return tower_seconds_; }

  // Across processes (DistributedTrainer): called every step with this process's
  // averaged gradients (by trainable variable), its sample count and its mean cost; it
  // must leave in them the same quantities over all processes. With buckets it is still
  // called once a step, after the last bucket (gradients of all variables), so bucketing
  // only overlaps the local averaging with backward. Towers of one objective only.
  using CrossReduce = std::function<void(std::span<Array> gradients, double& samples, double& cost)>;
  void set_cross_reduce(CrossReduce reduce);
  // Across processes too, for each exchange of the step (cross_tower_mean, synchronized
  // BatchNorm): called with this process's weighted mean of its towers' values and its
  // sample count; it must leave in `value` the mean over every process's samples.
  using CrossExchange = std::function<void(Array& value, double samples)>;
  void set_cross_exchange(CrossExchange exchange) { cross_exchange_ = std::move(exchange); }

 protected:
  SyncTowers(Reduction own, std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
             TowerOptions options);

  // The strategy's part of a step. use_averages: the averages of `variables` (in
  // averaged()) go where they are applied, as soon as they are final; apply: after every
  // average, the update and the parameters' distribution.
  virtual void use_averages(std::span<const int> variables) = 0;
  virtual void apply(std::uint64_t global_step) = 0;
  // Whether use_averages must see every average of the step at once (a host master's
  // loss scaling decides on all of them): then buckets only overlap the averaging.
  virtual bool needs_every_average() const { return false; }

  int objective() const { return current_; }
  std::vector<Array>& averaged() { return averaged_; }
  // The averages of `variables` into tower k's apply program feeds.
  void write_feeds(int k, std::span<const int> variables);
  // Towers first .. size() - 1 apply their feeds, at once, then each is waited for.
  void apply_feeds(int first, int last, std::uint64_t global_step);
  // This step's hyperparameters of the host master.
  const HostOptimizerStep& host_step() const { return host_step_; }

 private:
  double run_step(const Step& request) override;
  // Every tower's gradient program submitted; sets samples_ and weights_, returns the samples.
  double submit_gradients(const Step& request);
  // Writes each tower's next batch into its other input buffers (staging).
  void stage_next(std::span<const std::vector<Array>> next);
  // sync_reduce.cpp: each exchange of the towers' programs in turn (cross_tower_mean):
  // waits for every tower to reach it, and resumes each with the weighted mean of their
  // values (across processes where cross_exchange_ is set).
  void exchange_values(double total);
  // sync_reduce.cpp: waits for every tower's gradients and averages them, bucket by
  // bucket or at once, into averaged_, across processes where cross_reduce_ is set,
  // through the processors, and on to use_averages. Returns the weighted mean cost.
  double reduce_gradients(double total);
  void reduce_bucket(std::span<const int> variables, bool use);
  // Waits for every tower's gradient program; with time_towers, notes when each finished.
  void wait_gradients();

  CrossReduce cross_reduce_;
  CrossExchange cross_exchange_;
  std::vector<Array> exchanged_;  // by tower: its value at the current exchange
  Array mean_;                    // their weighted mean
  std::vector<Array> averaged_;  // by variable
  HostOptimizerStep host_step_;
  std::vector<double> samples_;  // this step's batch size of each tower
  std::vector<const float*> inputs_;
  std::vector<float> weights_;
  std::vector<int> bucket_;                                     // variables of the bucket being reduced
  std::vector<double> tower_seconds_;                           // time_towers
  std::vector<std::chrono::steady_clock::time_point> started_;  // by tower, this step
  int current_ = 0;                                             // the objective of this step
};

// Every tower holds all variables and applies the averaged gradients; with
// TowerOptions::loss_scale, in mixed precision.
class ReplicatedTowers final : public SyncTowers {
 public:
  // options.reduction must be Reduction::replicated.
  ReplicatedTowers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
                   TowerOptions options = {});

 private:
  void use_averages(std::span<const int> variables) override;
  void apply(std::uint64_t global_step) override;
};

// One master copy of the variables and optimizer state, on the host
// (TowerOptions::master = host: the devices only compute gradients, and the update
// overlaps backward with buckets) or on tower 0 (device: tower 0 applies the update with
// its optimizer program), applies the averaged gradients; every tower receives the
// parameters every step.
class ParameterServerTowers final : public SyncTowers {
 public:
  // options.reduction must be Reduction::parameter_server.
  ParameterServerTowers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
                        TowerOptions options);

 private:
  void use_averages(std::span<const int> variables) override;
  void apply(std::uint64_t global_step) override;
  bool needs_every_average() const override { return host_master() && options().loss_scale.has_value(); }
};

}  // namespace vkp::towers
