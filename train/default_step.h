// DefaultStep: the step a Trainer runs when no subclass overrides run_step (a graph with
// its train op, from ModelDesc or set_step): the next batch of the input source fed to
// the inputs, the train op run with the callbacks' fetches and the cost fetched. With
// StagingInput (staging_buffers() == 2) it is double-buffered (graph::FeedStager): a
// step's batch is written while the step before it runs. The epoch's last step, when it
// fetches the callbacks' epoch fetches, is a program of its own that runs alone.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "core/array.h"
#include "engine/graph/feed_stager.h"
#include "engine/graph/graph.h"
#include "engine/graph/session.h"
#include "train/input_source.h"

namespace vkp::train {

class DefaultStep {
 public:
  // Feeds `inputs` (placeholders) from `source`, runs `targets` and fetches `cost` (may
  // be an invalid Tensor).
  void set(std::vector<graph::Tensor> inputs, InputSourcePtr source, std::vector<graph::Tensor> targets,
           graph::Tensor cost);
  // Null before set().
  InputSource* source() const { return source_.get(); }
  const std::vector<graph::Tensor>& inputs() const { return inputs_; }
  const graph::Tensor& cost() const { return cost_; }

  // Where the step fetches the epoch fetches: the epoch's last step (`last_of_epoch`),
  // or the next one (`next_is_last`, which then finds nothing staged for it).
  struct Position {
    bool last_of_epoch = false;
    bool next_is_last = false;
  };
  // One step in `session`: returns the values of `fetches`, the callbacks' fetches of
  // this step (the same list from step to step, or with the epoch fetches at the end).
  std::span<const Array> run(graph::Session& session, const std::vector<graph::Tensor>& fetches, Position at);
  double last_cost() const { return last_cost_; }    // NaN without a cost
  std::int64_t samples() const { return samples_; }  // rows of a batch

  // The next step compiles its programs again (other fetches, timing turned on or off);
  // the session's cache finds those it had.
  void forget_programs();
  // Waits for a run a failed step left pending, throwing nothing.
  void wait_pending() noexcept;

 private:
  graph::Program& program(graph::Session& session, const std::vector<Array>& batch,
                          const std::vector<graph::Tensor>& fetches, bool last_of_epoch);

  std::vector<graph::Tensor> inputs_, targets_;
  graph::Tensor cost_;
  InputSourcePtr source_;
  graph::Program* program_ = nullptr;
  graph::Program* last_step_program_ = nullptr;  // with the epoch fetches
  graph::FeedStager stager_;
  std::vector<Array> outputs_;
  double last_cost_ = 0;
  std::int64_t samples_ = 0;
};

}  // namespace vkp::train
