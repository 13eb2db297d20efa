// Asynchronous towers (towers.h; tensorpack's AsyncMultiGPUTrainer): every tower runs free
// on a thread of its own. Threads start with the first batch fed. Tower k's thread takes
// the next batch (its own queue first, then the shared one), receives the host master's
// parameters and sets its session's global step to the master's update count (dropout
// masks), computes its gradients, and applies them (times async_scale, through the
// gradient processors' host forms) to the host master under a lock, as the update
// numbered by the master's count (Adam's t - 1), without averaging or waiting for the
// other towers. A gradient's staleness is the number of updates applied between the two.
// While the threads run, only feed, progress, take_async_stats and the hyperparameters
// may be called; drain() ends that. step() is feed(k, batches[k]) for every tower, then
// drain().
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "towers/towers.h"

namespace vkp::towers {

// What the asynchronous towers did since the last take_async_stats(), by tower.
struct AsyncStats {
  std::vector<std::uint64_t> updates;        // gradients applied
  std::vector<std::uint64_t> max_staleness;  // updates applied by others between its read and its apply
  std::vector<double> mean_staleness;
  std::vector<double> held_seconds;  // waiting for async_max_lead
};

// The updates applied since the last AsyncTowers::progress(): their cost averaged by
// batch size, their samples and count.
struct AsyncProgress {
  double cost = 0;
  double samples = 0;
  std::uint64_t updates = 0;
  std::uint64_t applied = 0;  // the master's update count
};

class AsyncTowers final : public Towers {
 public:
  // options.reduction must be Reduction::async.
  AsyncTowers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
              TowerOptions options);
  ~AsyncTowers() override;

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
  // the fetches set by set_async_fetches.
  AsyncProgress progress(std::vector<Array>& fetched);
  // Tensors of graph(0), fetched in every tower's program by node name (the towers are
  // built by one function). Only while drained.
  void set_async_fetches(const std::vector<graph::Tensor>& of_tower_0);
  // The master's update count from here on (a trainer passes global step x towers at
  // the start of an epoch, so that Adam's bias correction goes on after a resume).
  // Only while drained.
  void count_updates_from(std::uint64_t applied);
  AsyncStats take_async_stats();

  // While the threads run, a table they read before each gradient; otherwise tower 0's
  // session (which the next feed makes the table).
  float hyperparameter(const std::string& name) override;
  void set_hyperparameter(const std::string& name, float value) override;
  // Ignored: the threads number the steps by the master's updates.
  void follow_global_step(std::shared_ptr<const graph::StepClock> clock) override;

 private:
  struct State;  // internal/async_state.h

  double run_step(const Step& request) override;
  // Queueing a batch (k < 0: the shared queue), tower k's thread (its lead bound, its
  // computation, its update of the master), the master's hyperparameters, stopping.
  void enqueue(int k, std::vector<Array> batch);
  void run_tower(int k);
  void compute(int k, const std::vector<Array>& batch, std::uint64_t read,
               std::span<const std::pair<std::string, float>> hyper);
  void apply_update(int k, const std::vector<Array>& batch, std::uint64_t read);
  bool within_lead(int k) const;
  void refresh_host_step();
  void stop() noexcept;
  // Tower k's graph's tensors of these names (fetches of graph(0)).
  std::vector<graph::Tensor> same_in_tower(int k, const std::vector<graph::Tensor>& of_tower_0);

  std::unique_ptr<State> state_;
};

}  // namespace vkp::towers
