// Towers' asynchronous reduction (Reduction::async): a thread per tower, a shared queue
// of batches and one per tower, and the host master, which one mutex guards. A tower's
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
#include "towers/internal/tower_state.h"
#include "towers/towers.h"

namespace vkp::towers {

using detail::on_tower;
using Clock = std::chrono::steady_clock;


Towers::Async& Towers::async(const char* what) {
  if (options_.reduction != Reduction::async)
    throw Error(ErrorCode::invalid_argument, std::string("Towers::") + what + " needs async reduction; these towers use " +
                                                 to_string(options_.reduction));
  if (!async_) {
    async_ = std::make_unique<Async>(size());
    for (int k = 0; k < size(); ++k)
      for (const Array& v : master_) async_->parameters[static_cast<std::size_t>(k)].emplace_back(v.dtype(), v.shape());
  }
  return *async_;
}

std::vector<graph::Tensor> Towers::same_in_tower(int k, const std::vector<graph::Tensor>& of_tower_0) {
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

void Towers::feed(std::vector<Array> batch) {
  async("feed");
  enqueue(-1, std::move(batch));
}

void Towers::feed(int k, std::vector<Array> batch) {
  if (k < 0 || k >= size())
    throw Error(ErrorCode::invalid_argument, "Towers::feed: no tower " + std::to_string(k) + " of " + std::to_string(size()));
  async("feed");
  enqueue(k, std::move(batch));
}

// Activates the threads (starting them the first time), then queues the batch: tower
// k's, or the shared queue's when k < 0, which holds at most size() batches.
void Towers::enqueue(int k, std::vector<Array> batch) {
  Async& a = *async_;
  std::unique_lock lock(a.mutex);
  throw_if_failed(a.error);
  if (!a.active) {
    // The caller owns the sessions until now: tower 0's hyperparameters become the table.
    a.hyper.clear();
    for (const auto& [name, initial] : graph(0).hyperparameters()) a.hyper.emplace_back(name, session(0).hyperparameter(name));
    ++a.hyper_version;
    refresh_host_step();
    a.active = true;
  }
  if (a.threads.empty())
    for (int t = 0; t < size(); ++t) a.threads.emplace_back([this, t] { run_async_tower(t); });
  auto& queue = k < 0 ? a.shared : a.own[static_cast<std::size_t>(k)];
  a.done.wait(lock, [&] { return a.error || static_cast<int>(queue.size()) < size(); });
  throw_if_failed(a.error);
  queue.push_back(std::move(batch));
  a.work.notify_all();
}

// Under the lock: the master's hyperparameters from the table.
void Towers::refresh_host_step() {
  Async& a = *async_;
  a.host_step = read_host_optimizer_step(kind_, 0, [&](const std::string& name) {
    for (const auto& [n, v] : a.hyper)
      if (n == name) return v;
    throw Error(ErrorCode::not_found, "no hyperparameter named '" + name + "' in tower 0");
  });
}

// Under the lock: whether tower k may take a batch of the shared queue.
bool Towers::within_lead(int k) const {
  if (options_.async_max_lead < 0) return true;
  const Async& a = *async_;
  const std::uint64_t least = *std::min_element(a.clock.begin(), a.clock.end());
  return a.clock[static_cast<std::size_t>(k)] - least <= static_cast<std::uint64_t>(options_.async_max_lead);
}

// Tower k's thread: take a batch, copy the master's state under the lock, compute
// without it, apply under it.
void Towers::run_async_tower(int k) {
  Async& a = *async_;
  const auto ku = static_cast<std::size_t>(k);
  std::unique_lock lock(a.mutex);
  std::vector<Array> batch;
  while (a.take_batch(*this, k, lock, batch)) {
    const std::uint64_t read = a.applied;
    std::vector<Array>& parameters = a.parameters[ku];
    for (std::size_t i = 0; i < master_.size(); ++i)
      std::memcpy(parameters[i].bytes().data(), master_[i].bytes().data(), master_[i].nbytes());
    std::vector<std::pair<std::string, float>> hyper;
    if (a.hyper_seen[ku] != a.hyper_version) {
      hyper = a.hyper;
      a.hyper_seen[ku] = a.hyper_version;
    }
    lock.unlock();
    std::exception_ptr failed;
    try {
      compute_async(k, batch, read, hyper);
    } catch (...) {
      failed = std::current_exception();
    }
    lock.lock();
    --a.busy;
    try {
      if (!failed) apply_async(k, batch, read);
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
bool Towers::Async::take_batch(Towers& towers, int k, std::unique_lock<std::mutex>& lock, std::vector<Array>& batch) {
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
void Towers::compute_async(int k, const std::vector<Array>& batch, std::uint64_t read,
                           std::span<const std::pair<std::string, float>> hyper) {
  Replica& r = *towers_[static_cast<std::size_t>(k)];
  on_tower(k, [&] {
    for (const auto& [name, value] : hyper)
      if (has_hyperparameter(graph(k), name) && session(k).hyperparameter(name) != value)
        session(k).set_hyperparameter(name, value);
    receive_parameters(k, async_->parameters[static_cast<std::size_t>(k)]);
    r.session->wait_program(*r.receive_program, r.none);
    session(k).set_global_step(read);  // dropout masks differ by update
    graph::Program& p = gradient_program(k, batch, async_->fetches[static_cast<std::size_t>(k)]);
    r.session->submit_program(p, r.parts[0].stager.prepare(p, batch));
    r.session->wait_program(p, r.parts[0].outputs);
  });
  if (options_.async_scale != 1.0f)
    for (std::size_t i = 0; i < names_.size(); ++i)
      for (float& x : r.parts[0].outputs[1 + i].data<float>()) x *= options_.async_scale;
  // This tower's gradient through the processors, on its thread, as tensorpack's
  // asynchronous trainer applies them to each tower's gradients.
  process_on_host(all_variables_, std::span<Array>(r.parts[0].outputs).subspan(1, names_.size()));
}

// Under the lock: tower k's gradients, computed from update `read`, applied to the
// master as the update numbered `applied` (Adam's t - 1); the counters, the progress and
// the latest fetches follow.
void Towers::apply_async(int k, const std::vector<Array>& batch, std::uint64_t read) {
  Async& a = *async_;
  // Async towers have one objective, whose gradients are every trainable variable's.
  const Part& r = towers_[static_cast<std::size_t>(k)]->parts[0];
  const auto ku = static_cast<std::size_t>(k);
  a.host_step.global_step = a.applied;
  apply_host_master(all_variables_, a.host_step, std::span<const Array>(r.outputs).subspan(1, names_.size()));
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
  a.latest_fetched.assign(r.outputs.begin() + static_cast<std::ptrdiff_t>(1 + names_.size()), r.outputs.end());
  a.has_latest = true;
}

void Towers::drain() {
  Async& a = async("drain");
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
  send_parameters();
  store_master_slots();
  a.dirty = false;
}

void Towers::abandon() noexcept {
  if (!async_) return;
  Async& a = *async_;
  std::unique_lock lock(a.mutex);
  a.shared.clear();
  for (auto& q : a.own) q.clear();
  a.done.wait(lock, [&] { return a.busy == 0; });
  a.error = nullptr;
  a.active = false;
}

AsyncProgress Towers::progress(std::vector<Array>& fetched) {
  Async& a = async("progress");
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

void Towers::set_async_fetches(const std::vector<graph::Tensor>& of_tower_0) {
  Async& a = async("set_async_fetches");
  std::unique_lock lock(a.mutex);
  if (a.active) throw Error(ErrorCode::invalid_argument, "Towers::set_async_fetches: drain the towers first");
  for (int k = 0; k < size(); ++k) a.fetches[static_cast<std::size_t>(k)] = same_in_tower(k, of_tower_0);
  a.latest_fetched.clear();
  a.has_latest = false;
}

void Towers::count_updates_from(std::uint64_t applied) {
  Async& a = async("count_updates_from");
  std::unique_lock lock(a.mutex);
  if (a.active) throw Error(ErrorCode::invalid_argument, "Towers::count_updates_from: drain the towers first");
  a.applied = applied;
}

AsyncStats Towers::take_async_stats() {
  Async& a = async("take_async_stats");
  std::unique_lock lock(a.mutex);
  AsyncStats out = a.stats;
  for (std::size_t k = 0; k < out.updates.size(); ++k)
    out.mean_staleness[k] = out.updates[k] > 0 ? a.staleness_sum[k] / static_cast<double>(out.updates[k]) : 0.0;
  a.reset_stats(size());
  return out;
}

float Towers::hyperparameter(const std::string& name) {
  if (async_) {
    std::unique_lock lock(async_->mutex);
    if (async_->active)
      for (const auto& [n, v] : async_->hyper)
        if (n == name) return v;
  }
  return session(0).hyperparameter(name);
}

void Towers::set_hyperparameter(const std::string& name, float value) {
  if (async_) {
    Async& a = *async_;
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
  session(0).set_hyperparameter(name, value);
}

void Towers::stop_async() noexcept {
  if (!async_) return;
  {
    std::unique_lock lock(async_->mutex);
    async_->stopping = true;
  }
  async_->work.notify_all();
  for (std::thread& t : async_->threads) t.join();
  async_->threads.clear();
}

// step() with async: a batch for every tower, then drain.
double Towers::step_async(std::span<const std::vector<Array>> batches, const std::vector<graph::Tensor>& fetches,
                          std::vector<Array>& fetched) {
  Async& a = async("step");
  drain();
  bool same = a.fetches[0].size() == fetches.size();
  for (std::size_t i = 0; same && i < fetches.size(); ++i) same = a.fetches[0][i].id() == fetches[i].id();
  if (!same) set_async_fetches(fetches);
  times_ = {};
  const auto start = Clock::now();
  double total = 0;
  for (int k = 0; k < size(); ++k) {
    total += static_cast<double>(batch_rows(batches[static_cast<std::size_t>(k)]));
    feed(k, batches[static_cast<std::size_t>(k)]);
  }
  drain();
  times_.compute = std::chrono::duration<double>(Clock::now() - start).count();
  double cost = 0;
  for (int k = 0; k < size(); ++k)
    cost += static_cast<double>(batch_rows(batches[static_cast<std::size_t>(k)])) / total *
            towers_[static_cast<std::size_t>(k)]->parts[0].outputs[0].data<float>()[0];
  const Part& first = towers_[0]->parts[0];
  fetched.assign(first.outputs.begin() + static_cast<std::ptrdiff_t>(1 + names_.size()), first.outputs.end());
  return cost;
}

}  // namespace vkp::towers
