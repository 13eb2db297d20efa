// Towers' synchronous reduction: waiting for every tower's gradients, averaging them
// (bucket by bucket while backward runs, or at once), across processes, through the
// gradient processors' host forms, and into the applying towers' feeds or the host master.
#include <algorithm>
#include <chrono>

#include "towers/internal/host_average.h"
#include "towers/internal/tower_state.h"
#include "towers/towers.h"

namespace vkp::towers {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

using detail::on_tower;

}  // namespace

void Towers::apply_host_master(std::span<const int> variables, const HostOptimizerStep& step,
                               std::span<const Array> gradients) {
  for (int v : variables) {
    const auto i = static_cast<std::size_t>(v);
    std::vector<Array>& slots = master_slots_[i];
    apply_host_optimizer(step, master_[i].data<float>().data(), gradients[i].data<float>().data(),
                         slots.empty() ? nullptr : slots[0].data<float>().data(),
                         slots.size() < 2 ? nullptr : slots[1].data<float>().data(), master_[i].shape().numel());
  }
}

void Towers::process_on_host(std::span<const int> variables, std::span<Array> gradients) {
  if (processors_.empty()) return;
  std::vector<graph::HostGradient> grads;
  grads.reserve(variables.size());
  for (int i : variables)
    grads.push_back({names_[static_cast<std::size_t>(i)], gradients[static_cast<std::size_t>(i)].data<float>()});
  graph::process_gradients_on_host(processors_, grads);
}

void Towers::use_averages(std::span<const int> variables) {
  if (host_master()) {
    apply_host_master(variables, host_step_, averaged_);
    return;
  }
  for (int k = 0; k < size(); ++k)
    if (applies(k))
      for (int i : variables)
        apply_program(k).write_feed(static_cast<std::size_t>(position_[static_cast<std::size_t>(current_)][static_cast<std::size_t>(i)]),
                                    averaged_[static_cast<std::size_t>(i)], 0);
}

void Towers::reduce_bucket(std::span<const int> variables, bool write_feeds) {
  const int n = size();
  inputs_.resize(static_cast<std::size_t>(n));
  for (int i : variables) {
    for (int k = 0; k < n; ++k) inputs_[static_cast<std::size_t>(k)] = gradient_output(k, i).data<float>().data();
    Array& out = averaged_[static_cast<std::size_t>(i)];
    weighted_sum(inputs_, weights_, out.data<float>().data(), out.shape().numel());
  }
  if (write_feeds) use_averages(variables);
}

void Towers::wait_gradients() {
  const int n = size();
  if (options_.time_towers) {
    // Polls while more than one tower computes, then blocks on the last: the fast
    // towers' times are known to 100 us and the step does not wait longer.
    tower_seconds_.assign(static_cast<std::size_t>(n), -1.0);
    int running = n;
    while (running > 1) {
      for (int k = 0; k < n; ++k) {
        double& t = tower_seconds_[static_cast<std::size_t>(k)];
        if (t < 0 && part(k).program->finished()) {
          t = seconds_since(started_[static_cast<std::size_t>(k)]);
          --running;
        }
      }
      if (running > 1) std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
  }
  for (int k = 0; k < n; ++k) {
    Part& p = part(k);
    on_tower(k, [&] { session(k).wait_program(*p.program, p.outputs); });
    if (options_.time_towers && tower_seconds_[static_cast<std::size_t>(k)] < 0)
      tower_seconds_[static_cast<std::size_t>(k)] = seconds_since(started_[static_cast<std::size_t>(k)]);
  }
}

double Towers::reduce_gradients(std::span<const double> samples, double total) {
  const int n = size();
  const bool bucketed = options_.bucket_bytes > 0;
  // Across processes the averages change after the last bucket: feed them only then.
  // Likewise the host master's update, and where gradient processors need every average.
  const bool feed_early = !cross_reduce_ && processors_.empty();
  if (bucketed) {
    // Tower 0's buckets set the order; another tower's program may cut its segments
    // elsewhere (another schedule), so wait there for every segment up to the one
    // holding the bucket's last gradient.
    const graph::Program& first = *part(0).program;
    const std::vector<int>& vars = objective_vars_[static_cast<std::size_t>(current_)];
    for (int s = 0; s < first.segment_count(); ++s) {
      bucket_.clear();
      for (int f : first.segment_fetches(s)) bucket_.push_back(vars[static_cast<std::size_t>(f - 1)]);
      for (int k = 0; k < n; ++k) {
        Part& r = part(k);
        int need = -1;
        for (int i : bucket_) need = std::max(need, r.segment_of[static_cast<std::size_t>(i)]);
        on_tower(k, [&] {
          for (; r.next_segment <= need; ++r.next_segment) r.program->wait_segment(r.next_segment, r.outputs);
        });
      }
      const auto start = Clock::now();
      reduce_bucket(bucket_, feed_early);
      const double spent = seconds_since(start);
      times_.reduce += spent;
      times_.exposed_reduce = spent;  // only the last bucket's averaging is not overlapped
    }
    times_.buckets = first.segment_count();
  }
  wait_gradients();
  double cost = 0;
  for (int k = 0; k < n; ++k) cost += samples[static_cast<std::size_t>(k)] / total * part(k).outputs[0].data<float>()[0];

  const auto start = Clock::now();
  if (!bucketed) {
    reduce_bucket(objective_vars_[static_cast<std::size_t>(current_)], feed_early);
    times_.buckets = 1;
  }
  if (cross_reduce_) cross_reduce_(averaged_, total, cost);
  if (!feed_early) {
    const std::vector<int>& vars = objective_vars_[static_cast<std::size_t>(current_)];
    process_on_host(vars, averaged_);
    use_averages(vars);
  }
  const double spent = seconds_since(start);
  times_.reduce += spent;
  times_.exposed_reduce = bucketed ? times_.exposed_reduce + spent : spent;
  return cost;
}

void Towers::set_cross_reduce(CrossReduce reduce) {
  if (reduce && options_.reduction == Reduction::async)
    throw Error(ErrorCode::unsupported, "async towers cannot be reduced across processes");
  if (reduce && objective_count() > 1)
    throw Error(ErrorCode::unsupported, "towers of several objectives (a GAN's) cannot be reduced across processes yet");
  cross_reduce_ = std::move(reduce);
}

}  // namespace vkp::towers
