// SyncTowers' reduction: waiting for every tower's gradients, averaging them (bucket by
// bucket while backward runs, or at once), across processes, through the gradient
// processors' host forms, and on to the strategy (use_averages).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <thread>

#include "core/error.h"
#include "towers/host_average.h"
#include "towers/internal/replicas.h"
#include "towers/sync_towers.h"

namespace vkp::towers {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

}  // namespace

void SyncTowers::reduce_bucket(std::span<const int> variables, bool use) {
  const int n = size();
  inputs_.resize(static_cast<std::size_t>(n));
  for (int i : variables) {
    for (int k = 0; k < n; ++k)
      inputs_[static_cast<std::size_t>(k)] = replicas().gradient_output(k, current_, i).data<float>().data();
    Array& out = averaged_[static_cast<std::size_t>(i)];
    weighted_sum(inputs_, weights_, out.data<float>().data(), out.shape().numel());
  }
  if (use) use_averages(variables);
}

void SyncTowers::exchange_values(double total) {
  const int n = size();
  Replicas& r = replicas();
  const int count = r.part(0, current_).program->exchange_count();
  for (int k = 1; k < n; ++k)
    if (r.part(k, current_).program->exchange_count() != count)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("tower {} exchanges {} values a step (cross_tower_mean), tower 0 {}: every tower must "
                              "build the same synchronized layers",
                              k, r.part(k, current_).program->exchange_count(), count));
  exchanged_.resize(static_cast<std::size_t>(n));
  inputs_.resize(static_cast<std::size_t>(n));
  for (int e = 0; e < count; ++e) {
    for (int k = 0; k < n; ++k) {
      Array& value = exchanged_[static_cast<std::size_t>(k)];
      on_tower(k, [&] { r.part(k, current_).program->wait_exchange(e, value); });
      if (value.shape().dims() != exchanged_[0].shape().dims())
        throw Error(ErrorCode::invalid_argument,
                    fmt::format("tower {} exchanges {} at exchange {}, tower 0 {}: every tower must build the same "
                                "synchronized layers",
                                k, describe(value), e, describe(exchanged_[0])));
      inputs_[static_cast<std::size_t>(k)] = value.data<float>().data();
    }
    const Array& first = exchanged_[0];
    if (mean_.dtype() != first.dtype() || mean_.shape().dims() != first.shape().dims())
      mean_ = Array(first.dtype(), first.shape());
    weighted_sum(inputs_, weights_, mean_.data<float>().data(), mean_.shape().numel());
    if (cross_exchange_) cross_exchange_(mean_, total);
    for (int k = 0; k < n; ++k) on_tower(k, [&] { r.part(k, current_).program->resume_exchange(e, mean_); });
  }
}

void SyncTowers::wait_gradients() {
  const int n = size();
  Replicas& r = replicas();
  const bool timed = options().time_towers;
  if (timed) {
    // Polls while more than one tower computes, then blocks on the last: the fast
    // towers' times are known to 100 us and the step does not wait longer.
    tower_seconds_.assign(static_cast<std::size_t>(n), -1.0);
    int running = n;
    while (running > 1) {
      for (int k = 0; k < n; ++k) {
        double& t = tower_seconds_[static_cast<std::size_t>(k)];
        if (t < 0 && r.part(k, current_).program->finished()) {
          t = seconds_since(started_[static_cast<std::size_t>(k)]);
          --running;
        }
      }
      if (running > 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  for (int k = 0; k < n; ++k) {
    Part& p = r.part(k, current_);
    on_tower(k, [&] { session(k).wait_program(*p.program, p.outputs); });
    if (timed && tower_seconds_[static_cast<std::size_t>(k)] < 0)
      tower_seconds_[static_cast<std::size_t>(k)] = seconds_since(started_[static_cast<std::size_t>(k)]);
  }
}

double SyncTowers::reduce_gradients(double total) {
  const int n = size();
  Replicas& r = replicas();
  StepTimes& times = this->times();
  const bool bucketed = options().bucket_bytes > 0;
  // Across processes the averages change after the last bucket: feed them only then.
  // Likewise the host master's update, and where gradient processors need every average.
  const bool feed_early = !cross_reduce_ && processors().empty() && !needs_every_average();
  if (bucketed) {
    // Tower 0's buckets set the order; another tower's program may cut its segments
    // elsewhere (another schedule), so wait there for every segment up to the one
    // holding the bucket's last gradient.
    const graph::Program& first = *r.part(0, current_).program;
    const std::vector<int>& vars = objective_variables(current_);
    for (int s = 0; s < first.segment_count(); ++s) {
      bucket_.clear();
      for (int f : first.segment_fetches(s)) bucket_.push_back(vars[static_cast<std::size_t>(f - 1)]);
      for (int k = 0; k < n; ++k) {
        Part& p = r.part(k, current_);
        int need = -1;
        for (int i : bucket_) need = std::max(need, p.segment_of[static_cast<std::size_t>(i)]);
        on_tower(k, [&] {
          for (; p.next_segment <= need; ++p.next_segment) p.program->wait_segment(p.next_segment, p.outputs);
        });
      }
      const auto start = Clock::now();
      reduce_bucket(bucket_, feed_early);
      const double spent = seconds_since(start);
      times.reduce += spent;
      times.exposed_reduce = spent;  // only the last bucket's averaging is not overlapped
    }
    times.buckets = first.segment_count();
  }
  wait_gradients();
  double cost = 0;
  for (int k = 0; k < n; ++k)
    cost += samples_[static_cast<std::size_t>(k)] / total * r.part(k, current_).outputs[0].data<float>()[0];

  const auto start = Clock::now();
  if (!bucketed) {
    reduce_bucket(objective_variables(current_), feed_early);
    times.buckets = 1;
  }
  if (cross_reduce_) cross_reduce_(averaged_, total, cost);
  if (!feed_early) {
    const std::vector<int>& vars = objective_variables(current_);
    // With loss scaling the processors see the averages unscaled; the update divides them.
    r.process_on_host(vars, averaged_, options().loss_scale && !processors().empty() ? r.scale_of(0, current_) : 1.0f);
    use_averages(vars);
  }
  const double spent = seconds_since(start);
  times.reduce += spent;
  times.exposed_reduce = bucketed ? times.exposed_reduce + spent : spent;
  return cost;
}

void SyncTowers::set_cross_reduce(CrossReduce reduce) {
  if (reduce && objective_count() > 1)
    throw Error(ErrorCode::unsupported,
                "towers of several objectives (a GAN's) cannot be reduced across processes yet");
  cross_reduce_ = std::move(reduce);
}

}  // namespace vkp::towers
