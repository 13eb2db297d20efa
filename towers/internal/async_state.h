// The shared state of AsyncTowers' threads (async_towers.cpp). Internal to towers/.
#pragma once

#include <algorithm>
#include <condition_variable>
#include <deque>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "towers/async_towers.h"
#include "towers/host_optimizer.h"

namespace vkp::towers {

struct AsyncTowers::State {
  explicit State(int towers)
      : own(static_cast<std::size_t>(towers)),
        clock(static_cast<std::size_t>(towers), 0),
        hyper_seen(static_cast<std::size_t>(towers), 0),
        fetches(static_cast<std::size_t>(towers)),
        parameters(static_cast<std::size_t>(towers)),
        staleness_sum(static_cast<std::size_t>(towers), 0) {
    reset_stats(towers);
  }

  void reset_stats(int towers) {
    const auto n = static_cast<std::size_t>(towers);
    stats = {std::vector<std::uint64_t>(n, 0), std::vector<std::uint64_t>(n, 0), std::vector<double>(n, 0),
             std::vector<double>(n, 0)};
    std::fill(staleness_sum.begin(), staleness_sum.end(), 0.0);
  }

  bool take_batch(const AsyncTowers& towers, int k, std::unique_lock<std::mutex>& lock, std::vector<Array>& batch);

  bool idle() const {
    if (busy > 0 || !shared.empty()) return false;
    return std::all_of(own.begin(), own.end(), [](const auto& q) { return q.empty(); });
  }

  std::mutex mutex;
  std::condition_variable work;  // for the threads: a batch, a clock moved, stopping
  std::condition_variable done;  // for the caller: a batch taken or applied, an error
  std::deque<std::vector<Array>> shared;
  std::vector<std::deque<std::vector<Array>>> own;  // by tower
  std::vector<std::thread> threads;
  bool stopping = false;
  bool active = false;  // the threads own the sessions: since the first feed after a drain
  bool dirty = false;   // updates applied since the last drain
  std::exception_ptr error;
  int busy = 0;  // threads with a batch

  std::uint64_t applied = 0;         // the master's update count
  std::vector<std::uint64_t> clock;  // updates each tower applied (the lead bound)

  // Hyperparameters while active: tower 0's at activation, then set_hyperparameter's.
  std::vector<std::pair<std::string, float>> hyper;
  std::uint64_t hyper_version = 0;
  std::vector<std::uint64_t> hyper_seen;  // by tower, the version its session holds
  HostOptimizerStep host_step;            // the master's, from `hyper`

  std::vector<std::vector<graph::Tensor>> fetches;  // by tower
  std::vector<std::vector<Array>> parameters;       // by tower, the master's copy it receives
  std::vector<Array> latest_fetched;
  bool has_latest = false;
  AsyncProgress since;  // updates since the last progress()
  double last_cost = std::numeric_limits<double>::quiet_NaN();

  AsyncStats stats;
  std::vector<double> staleness_sum;
};

}  // namespace vkp::towers
