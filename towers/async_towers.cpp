// AsyncTowers: a thread per tower, a shared queue of batches and one per tower, and the
// host master, which one mutex guards. A tower's
// job: take a batch (its own queue first, then the shared one under the lead bound),
// copy the master's parameters under the lock and receive them, compute its gradients,
// apply them to the master under the lock. Only the master's copy and the counters are
// shared; each tower's session, programs and outputs belong to its thread while the
// threads are active (between the first feed and drain), to the caller otherwise.
#include <algorithm>
#include <chrono>
#include <cstring>
#include <limits>

#include "core/error.h"
#include "towers/host_average.h"
#include "towers/host_master.h"
#include "towers/internal/async_state.h"
#include "towers/internal/replicas.h"

namespace vkp::towers {

using Clock = std::chrono::steady_clock;

AsyncTowers::AsyncTowers(std::vector<vk::Device*> devices, const BuildFn& build, const OptimizerFn& optimizer,
                         TowerOptions options)
    : Towers(Reduction::async, std::move(devices), build, optimizer, std::move(options)),
      state_(std::make_unique<State>(size())) {
  for (int k = 0; k < size(); ++k)
    for (const Array& v : master("AsyncTowers").values())
      state_->parameters[static_cast<std::size_t>(k)].emplace_back(v.dtype(), v.shape());
}

AsyncTowers::~AsyncTowers() { stop(); }

std::vector<graph::Tensor> AsyncTowers::same_in_tower(int k, const std::vector<graph::Tensor>& of_tower_0) {
  if (k == 0) return of_tower_0;
  std::vector<graph::Tensor> out;
  for (const graph::Tensor& t : of_tower_0) on_tower(k, [&] { out.push_back(graph(k).find(t.name())); });
  return out;
}

namespace {

// Under the lock: a thread's error, thrown once.
void throw_if_failed(std::exception_ptr& error) {
  if (!error) return;
  std::exception_ptr e = error;
  error = nullptr;
  std::rethrow_exception(e);
}

bool has_hyperparameter(const graph::Graph& g, const std::string& name) {
  const auto& all = g.hyperparameters();
  return std::any_of(all.begin(), all.end(), [&](const auto& h) { return h.first == name; });
}

}  // namespace

void AsyncTowers::feed(std::vector<Array> batch) { enqueue(-1, std::move(batch)); }

void AsyncTowers::feed(int k, std::vector<Array> batch) {
  if (k < 0 || k >= size())
    throw Error(ErrorCode::invalid_argument,
                "AsyncTowers::feed: no tower " + std::to_string(k) + " of " + std::to_string(size()));
  enqueue(k, std::move(batch));
}

// Activates the threads (starting them the first time), then queues the batch: tower
// k's, or the shared queue's when k < 0, which holds at most size() batches.
void AsyncTowers::enqueue(int k, std::vector<Array> batch) {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  throw_if_failed(a.error);
  if (!a.active) {
    // The caller owns the sessions until now: tower 0's hyperparameters become the table.
    a.hyper.clear();
    for (const auto& [name, initial] : graph(0).hyperparameters())
      a.hyper.emplace_back(name, session(0).hyperparameter(name));
    ++a.hyper_version;
    refresh_host_step();
    a.active = true;
  }
  if (a.threads.empty())
    for (int t = 0; t < size(); ++t) a.threads.emplace_back([this, t] { run_tower(t); });
  auto& queue = k < 0 ? a.shared : a.own[static_cast<std::size_t>(k)];
  a.done.wait(lock, [&] { return a.error || static_cast<int>(queue.size()) < size(); });
  throw_if_failed(a.error);
  queue.push_back(std::move(batch));
  a.work.notify_all();
}

// Under the lock: the master's hyperparameters from the table.
void AsyncTowers::refresh_host_step() {
  State& a = *state_;
  a.host_step = read_host_optimizer_step(replicas().optimizer_kind(), 0, [&](const std::string& name) {
    for (const auto& [n, v] : a.hyper)
      if (n == name) return v;
    throw Error(ErrorCode::not_found, "no hyperparameter named '" + name + "' in tower 0");
  });
}

// Under the lock: whether tower k may take a batch of the shared queue.
bool AsyncTowers::within_lead(int k) const {
  const int max_lead = options().async_max_lead;
  if (max_lead < 0) return true;
  const State& a = *state_;
  const std::uint64_t least = *std::min_element(a.clock.begin(), a.clock.end());
  return a.clock[static_cast<std::size_t>(k)] - least <= static_cast<std::uint64_t>(max_lead);
}

// Tower k's thread: take a batch, copy the master's state under the lock, compute
// without it, apply under it.
void AsyncTowers::run_tower(int k) {
  State& a = *state_;
  const std::vector<Array>& master = this->master("run_tower").values();
  const auto ku = static_cast<std::size_t>(k);
  std::unique_lock lock(a.mutex);
  std::vector<Array> batch;
  while (a.take_batch(*this, k, lock, batch)) {
    const std::uint64_t read = a.applied;
    std::vector<Array>& parameters = a.parameters[ku];
    for (std::size_t i = 0; i < master.size(); ++i)
      std::memcpy(parameters[i].bytes().data(), master[i].bytes().data(), master[i].nbytes());
    std::vector<std::pair<std::string, float>> hyper;
    if (a.hyper_seen[ku] != a.hyper_version) {
      hyper = a.hyper;
      a.hyper_seen[ku] = a.hyper_version;
    }
    lock.unlock();
    std::exception_ptr failed;
    try {
      compute(k, batch, read, hyper);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    --a.busy;
    try {
      if (!failed) apply_update(k, batch, read);
    } catch (...) {
      failed = std::current_exception();
    }
    if (failed) {
      // The first error wins; what no tower has taken is dropped.
      if (!a.error) a.error = failed;
      a.shared.clear();
      for (auto& q : a.own) q.clear();
    }
    a.done.notify_all();
    a.work.notify_all();  // the clocks moved
  }
}

// Under the lock: waits for tower k's next batch, its own or a shared one within the
// lead bound, and takes it; false when the threads stop.
bool AsyncTowers::State::take_batch(const AsyncTowers& towers, int k, std::unique_lock<std::mutex>& lock,
                                    std::vector<Array>& batch) {
  const auto ku = static_cast<std::size_t>(k);
  bool held = false;
  Clock::time_point held_since;
  for (;;) {
    if (stopping) return false;
    if (!error && !own[ku].empty()) {
      batch = std::move(own[ku].front());
      own[ku].pop_front();
      break;
    }
    const bool lead_ok = towers.within_lead(k);
    if (!error && !shared.empty() && lead_ok) {
      batch = std::move(shared.front());
      shared.pop_front();
      break;
    }
    if (!error && !shared.empty() && !lead_ok && !held) {
      held = true;
      held_since = Clock::now();
    }
    work.wait(lock);
  }
  if (held) stats.held_seconds[ku] += std::chrono::duration<double>(Clock::now() - held_since).count();
  ++busy;
  done.notify_all();  // a place in the queue
  return true;
}

// Without the lock, on tower k's thread: its session takes the hyperparameters that
// changed and the parameters of update `read`, then computes the gradients of `batch`.
void AsyncTowers::compute(int k, const std::vector<Array>& batch, std::uint64_t read,
                          std::span<const std::pair<std::string, float>> hyper) {
  Replicas& replicas = this->replicas();
  Replica& r = replicas.at(k);
  const std::size_t n = trainable_names().size();
  on_tower(k, [&] {
    for (const auto& [name, value] : hyper)
      if (has_hyperparameter(graph(k), name) && session(k).hyperparameter(name) != value)
        session(k).set_hyperparameter(name, value);
    replicas.receive_parameters(k, state_->parameters[static_cast<std::size_t>(k)]);
    r.session->wait_program(*r.receive_program, r.none);
    session(k).set_global_step(read);  // dropout masks differ by update
    graph::Program& p = replicas.gradient_program(k, 0, true, batch, state_->fetches[static_cast<std::size_t>(k)]);
    // Each tower steps alone: there is no global batch to share statistics over.
    if (p.exchange_count() > 0)
      throw Error(ErrorCode::unsupported,
                  "asynchronous towers cannot exchange values between towers "
                  "(cross_tower_mean, BatchNorm's sync_statistics): use a synchronous "
                  "reduction (replicated or parameter server)");
    r.session->submit_program(p, r.parts[0].stager.prepare(p, batch));
    r.session->wait_program(p, r.parts[0].outputs);
  });
  // Async towers have one objective, whose gradients are every trainable variable's.
  const std::span<Array> gradients = std::span<Array>(r.parts[0].outputs).subspan(1, n);
  const std::vector<int>& all = objective_variables(0);
  if (options().async_scale != 1.0f) multiply(gradients, all, options().async_scale);
  // This tower's gradient through the processors, on its thread, as tensorpack's
  // asynchronous trainer applies them to each tower's gradients; with loss scaling,
  // unscaled by the scale it was taken with (sent with the parameters).
  const bool scaled = options().loss_scale && !processors().empty();
  replicas.process_on_host(all, gradients,
                           scaled ? state_->parameters[static_cast<std::size_t>(k)][n].data<float>()[0] : 1.0f);
}

// Under the lock: tower k's gradients, computed from update `read`, applied to the
// master as the update numbered `applied` (Adam's t - 1); the counters, the progress and
// the latest fetches follow.
void AsyncTowers::apply_update(int k, const std::vector<Array>& batch, std::uint64_t read) {
  State& a = *state_;
  // Async towers have one objective, whose gradients are every trainable variable's.
  Part& r = replicas().part(k, 0);
  const std::size_t n = trainable_names().size();
  const auto ku = static_cast<std::size_t>(k);
  a.host_step.global_step = a.applied;
  master("apply_update").apply(0, objective_variables(0), a.host_step, std::span<Array>(r.outputs).subspan(1, n));
  const std::uint64_t staleness = a.applied - read;
  ++a.applied;
  ++a.clock[ku];
  a.dirty = true;
  ++a.stats.updates[ku];
  a.staleness_sum[ku] += static_cast<double>(staleness);
  a.stats.max_staleness[ku] = std::max(a.stats.max_staleness[ku], staleness);
  const double samples = static_cast<double>(batch_rows(batch));
  const double cost = r.outputs[0].data<float>()[0];
  a.since.cost += cost * samples;
  a.since.samples += samples;
  ++a.since.updates;
  a.last_cost = cost;
  a.latest_fetched.assign(r.outputs.begin() + static_cast<std::ptrdiff_t>(1 + n), r.outputs.end());
  a.has_latest = true;
}

void AsyncTowers::drain() {
  State& a = *state_;
  {
    std::unique_lock lock(a.mutex);
    a.done.wait(lock, [&] { return a.idle(); });  // a failed thread empties the queues
    a.active = false;
    throw_if_failed(a.error);
  }
  // The threads are idle and the queues empty: the caller owns the sessions again.
  for (int k = 0; k < size(); ++k) {
    if (a.hyper_seen[static_cast<std::size_t>(k)] == a.hyper_version) continue;
    for (const auto& entry : a.hyper)  // not a structured binding: clang 14 cannot capture one
      if (has_hyperparameter(graph(k), entry.first))
        on_tower(k, [&] { session(k).set_hyperparameter(entry.first, entry.second); });
    a.hyper_seen[static_cast<std::size_t>(k)] = a.hyper_version;
  }
  if (!a.dirty) return;
  replicas().send_parameters(master("drain").values(), 0);
  master("drain").store_slots();
  a.dirty = false;
}

void AsyncTowers::abandon() noexcept {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  a.shared.clear();
  for (auto& q : a.own) q.clear();
  a.done.wait(lock, [&] { return a.busy == 0; });
  a.error = nullptr;
  a.active = false;
}

AsyncProgress AsyncTowers::progress(std::vector<Array>& fetched) {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  // Before the first update there are no values to give: wait, unless nothing is coming.
  a.done.wait(lock, [&] { return a.error || a.has_latest || a.idle(); });
  throw_if_failed(a.error);
  AsyncProgress p = a.since;
  p.cost = p.samples > 0 ? p.cost / p.samples : a.last_cost;
  p.applied = a.applied;
  a.since = {};
  fetched = a.latest_fetched;
  return p;
}

void AsyncTowers::set_async_fetches(const std::vector<graph::Tensor>& of_tower_0) {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  if (a.active) throw Error(ErrorCode::invalid_argument, "AsyncTowers::set_async_fetches: drain the towers first");
  for (int k = 0; k < size(); ++k) a.fetches[static_cast<std::size_t>(k)] = same_in_tower(k, of_tower_0);
  a.latest_fetched.clear();
  a.has_latest = false;
}

void AsyncTowers::count_updates_from(std::uint64_t applied) {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  if (a.active) throw Error(ErrorCode::invalid_argument, "AsyncTowers::count_updates_from: drain the towers first");
  a.applied = applied;
}

AsyncStats AsyncTowers::take_async_stats() {
  State& a = *state_;
  std::unique_lock lock(a.mutex);
  AsyncStats out = a.stats;
  for (std::size_t k = 0; k < out.updates.size(); ++k)
    out.mean_staleness[k] = out.updates[k] > 0 ? a.staleness_sum[k] / static_cast<double>(out.updates[k]) : 0.0;
  a.reset_stats(size());
  return out;
}

float AsyncTowers::hyperparameter(const std::string& name) {
  {
    std::unique_lock lock(state_->mutex);
    if (state_->active)
      for (const auto& [n, v] : state_->hyper)
        if (n == name) return v;
  }
  return Towers::hyperparameter(name);
}

void AsyncTowers::set_hyperparameter(const std::string& name, float value) {
  State& a = *state_;
  {
    std::unique_lock lock(a.mutex);
    if (a.active) {
      const auto it = std::find_if(a.hyper.begin(), a.hyper.end(), [&](const auto& h) { return h.first == name; });
      if (it == a.hyper.end()) session(0).hyperparameter(name);  // throws, naming the known ones
      it->second = value;
      ++a.hyper_version;
      refresh_host_step();
      return;
    }
  }
  Towers::set_hyperparameter(name, value);
}

void AsyncTowers::follow_global_step(std::shared_ptr<const graph::StepClock>) {}

void AsyncTowers::stop() noexcept {
  {
    std::unique_lock lock(state_->mutex);
    state_->stopping = true;
  }
  state_->work.notify_all();
  for (std::thread& t : state_->threads) t.join();
  state_->threads.clear();
}

// A batch for every tower, then drain.
double AsyncTowers::run_step(const Step& request) {
  if (!request.next.empty())
    throw Error(ErrorCode::invalid_argument,
                "Towers::step: async towers write each batch on their own thread; give no next batches");
  const std::span<const std::vector<Array>> batches = request.batches;
  const std::vector<graph::Tensor>& fetches = request.fetches;
  State& a = *state_;
  drain();
  bool same = a.fetches[0].size() == fetches.size();
  for (std::size_t i = 0; same && i < fetches.size(); ++i) same = a.fetches[0][i].id() == fetches[i].id();
  if (!same) set_async_fetches(fetches);
  times() = {};
  const auto start = Clock::now();
  double total = 0;
  for (int k = 0; k < size(); ++k) {
    total += static_cast<double>(batch_rows(batches[static_cast<std::size_t>(k)]));
    feed(k, batches[static_cast<std::size_t>(k)]);
  }
  drain();
  times().compute = std::chrono::duration<double>(Clock::now() - start).count();
  double cost = 0;
  for (int k = 0; k < size(); ++k)
    cost += static_cast<double>(batch_rows(batches[static_cast<std::size_t>(k)])) / total *
            replicas().part(k, 0).outputs[0].data<float>()[0];
  const Part& first = replicas().part(0, 0);
  request.fetched.assign(first.outputs.begin() + static_cast<std::ptrdiff_t>(1 + trainable_names().size()),
                         first.outputs.end());
  return cost;
}

}  // namespace vkp::towers
