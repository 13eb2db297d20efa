#include "engine/graph/step_clock.h"

#include "core/error.h"

namespace vkp::graph {

void GlobalStep::set(std::int64_t step) {
  if (clock_)
    throw Error(
        ErrorCode::invalid_argument,
        "this session follows its trainer's global step; set the trainer's (TrainConfig::starting_global_step)");
  own_ = step;
}

void GlobalStep::follow(std::shared_ptr<const StepClock> clock) {
  if (!clock && clock_) own_ = clock_->now();  // count on from where the owner left it
  clock_ = std::move(clock);
}

}  // namespace vkp::graph
