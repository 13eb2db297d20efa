// DataFlow: a source of datapoints, read epoch by epoch (docs/design.md section 6).
//
// Lifecycle, as in tensorpack:
//   df.reset_state();                      // once, before anything else is read
//   for (Datapoint& dp : df.epoch()) ...   // one epoch; call epoch() again for the next
// or, without ranges:
//   df.start_epoch();
//   while (std::optional<Datapoint> dp = df.next()) ...
//
// An epoch ends when next() returns nullopt; every later next() returns nullopt too, until
// start_epoch() begins the next epoch. start_epoch() may also be called mid-epoch: the rest
// of that epoch is abandoned. If no epoch has been started since reset_state(), the first
// next() starts one.
//
// A DataFlow is read by one thread at a time. Dataflows that draw random numbers take a
// seed and use vkp::Rng, so the same seed gives the same datapoints in the same order.
#pragma once

#include <cstddef>
#include <iterator>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"

namespace vkp::dataflow {

// One datapoint: its components, e.g. {image, label}.
using Datapoint = std::vector<Array>;

class DataFlow;
using DataFlowPtr = std::unique_ptr<DataFlow>;

// The datapoints of one epoch as an input range; see DataFlow::epoch().
class EpochRange {
 public:
  class Iterator {
   public:
    using iterator_concept = std::input_iterator_tag;
    using value_type = Datapoint;
    using difference_type = std::ptrdiff_t;

    Iterator() = default;
    explicit Iterator(DataFlow* flow);
    Datapoint& operator*() const { return *current_; }
    Datapoint* operator->() const { return &*current_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return !current_.has_value(); }

   private:
    DataFlow* flow_ = nullptr;
    // mutable: operator* hands out a mutable reference so that a loop body may move
    // the datapoint's Arrays away.
    mutable std::optional<Datapoint> current_;
  };

  explicit EpochRange(DataFlow& flow) : flow_(&flow) {}
  Iterator begin() { return Iterator(flow_); }
  std::default_sentinel_t end() const { return {}; }

 private:
  DataFlow* flow_;
};

class DataFlow {
 public:
  DataFlow() = default;
  DataFlow(const DataFlow&) = delete;
  DataFlow& operator=(const DataFlow&) = delete;
  virtual ~DataFlow() = default;

  // Prepares the flow to be read (seeds generators, starts worker threads); call it
  // exactly once, in or before the thread that reads. Combinators reset what they wrap.
  void reset_state();
  // Begins a new epoch, abandoning the rest of the current one.
  void start_epoch();
  // The next datapoint of the current epoch, or nullopt once the epoch has ended.
  std::optional<Datapoint> next();
  // start_epoch(), then the epoch's datapoints as a range for range-for.
  EpochRange epoch();

  // Datapoints per epoch when known. May be called before reset_state().
  virtual std::optional<std::size_t> size() const { return std::nullopt; }

  bool is_reset() const { return state_ != State::created; }

  // Why reading this flow again from reset_state(), with the same seeds, may not give
  // the same datapoints in the same order; "" when it does. A resumed run replays its
  // input to where the checkpoint left it and says so in its log when this is not "".
  // Asks the flows this one reads, depth first; names the flow that stands in the way.
  std::string replay_obstacle() const;

  // The flows this one reads, for walks over the pipeline.
  virtual std::vector<const DataFlow*> inputs() const { return {}; }

 protected:
  // Hooks for subclasses; the public functions above check the lifecycle and call them.
  virtual void on_reset_state() {}
  virtual void on_start_epoch() = 0;
  // Called only while an epoch runs; once it returned nullopt it is not called again
  // until the next on_start_epoch().
  virtual std::optional<Datapoint> on_next() = 0;

  // This flow's own reason not to replay exactly (see replay_obstacle()), its inputs' aside.
  virtual std::string own_replay_obstacle() const { return {}; }

  // The flows of `flows`, for inputs().
  static std::vector<const DataFlow*> pointers(const std::vector<DataFlowPtr>& flows);

  // The dynamic type's name ("BatchData"; namespaces other than vkp::dataflow kept), for messages.
  std::string type_name() const;

 private:
  enum class State { created, idle, running, ended };
  void require_reset(const char* call) const;

  State state_ = State::created;
};

}  // namespace vkp::dataflow
