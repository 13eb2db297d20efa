// What towers.cpp, host_master.cpp and async.cpp share, internal to towers/: each
// tower's state (Replica), the asynchronous towers' shared state (Async), and on_tower.
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

#include "core/error.h"
#include "engine/graph/feed_stager.h"
#include "towers/towers.h"

namespace vkp::towers {

// One objective's gradients and programs in one tower (a single-cost tower has one).
struct Towers::Part {
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
  std::vector<Array> outputs;  // cost, the objective's gradients, then the extra fetches
  graph::FeedStager stager;    // staging_buffers = 2
};

struct Towers::Replica {
  std::unique_ptr<graph::Graph> graph;
  std::unique_ptr<graph::Session> session;
  Tower tower;
  std::vector<Part> parts;                     // by objective
  std::vector<graph::Tensor> updates;          // update ops (BatchNorm averages)
  // Parameter server and async: placeholders for every trainable variable and the
  // assigns from them, compiled into receive_program, so that a tower receives all its
  // parameters in one submission (host-visible input buffers, one command buffer of
  // copies) rather than one staging allocation and submission per variable.
  std::vector<graph::Tensor> parameter_inputs;
  std::vector<graph::Tensor> assigns;
  graph::Program* receive_program = nullptr;
  // Tower 0 with its master on the device: every trainable variable fetched at once.
  std::vector<graph::Tensor> trainables;
  graph::Program* read_program = nullptr;
  std::vector<Array> outputs_of_read;
  std::vector<Array> none;
};

struct Towers::Async {
  explicit Async(int towers)
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

  bool take_batch(Towers& towers, int k, std::unique_lock<std::mutex>& lock, std::vector<Array>& batch);

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

  std::uint64_t applied = 0;           // the master's update count
  std::vector<std::uint64_t> clock;    // updates each tower applied (the lead bound)

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

// on_tower: runs fn, naming tower k in an Error it throws (towers may be VkDevices of one
// physical device, whose label alone does not tell them apart).
namespace vkp::towers::detail {

template <class Fn>
void on_tower(int k, Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    throw Error(e.code(), "tower " + std::to_string(k) + ": " + e.what());
  }
}

}  // namespace vkp::towers::detail
