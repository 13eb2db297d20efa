// StepClock: the global step as an explicit clock. Its owner (a trainer) sets and
// advances it; the sessions it is given to (Session::follow_global_step) read it for
// every run, and share its ownership, so a clock outlives whoever reads it. Not
// synchronised: the owner advances it on the thread that runs the sessions. GlobalStep:
// a session's own count, or the clock it follows.
#pragma once

#include <cstdint>
#include <memory>

namespace vkp::graph {

class StepClock {
 public:
  std::int64_t now() const { return step_; }
  void set(std::int64_t step) { step_ = step; }
  void advance() { ++step_; }

 private:
  std::int64_t step_ = 0;
};

// The global step a Session writes for its runs: a count of its own, advanced after each
// run that updates variables, or, while it follows one, a clock's (its trainer's), which
// only the clock's owner moves.
class GlobalStep {
 public:
  std::int64_t now() const { return clock_ ? clock_->now() : own_; }
  // Error(invalid_argument) naming the owner to set instead while following a clock.
  void set(std::int64_t step);
  // Follow `clock`; nullptr: count again, on from the clock's value.
  void follow(std::shared_ptr<const StepClock> clock);
  // A run that updated variables is done: counted unless a clock is followed.
  void count_update() {
    if (!clock_) ++own_;
  }

 private:
  std::int64_t own_ = 0;
  std::shared_ptr<const StepClock> clock_;  // null: own_
};

}  // namespace vkp::graph
