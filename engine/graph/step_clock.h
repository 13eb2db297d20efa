// StepClock: the global step as an explicit clock. Its owner (a trainer) sets and
// advances it; the sessions it is given to (Session::follow_global_step) read it for
// every run, and share its ownership, so a clock outlives whoever reads it. Not
// synchronised: the owner advances it on the thread that runs the sessions.
#pragma once

#include <cstdint>

namespace vkp::graph {

class StepClock {
 public:
  std::int64_t now() const { return step_; }
  void set(std::int64_t step) { step_ = step; }
  void advance() { ++step_; }

 private:
  std::int64_t step_ = 0;
};

}  // namespace vkp::graph
