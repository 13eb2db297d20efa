// ProgramExchanges: a compiled program's cross_tower_mean nodes, in the order it computes
// them, and how far the pending run has got through them. A run stops after computing
// each exchange's input; the host reads that input (a read-back copy made at the end of
// the exchange's recording), writes the node's value (the towers' mean), which the
// later recordings read, and resumes the run. They go in order, each once per run.
#pragma once

#include <cstddef>
#include <vector>

#include "core/array.h"
#include "engine/graph/tensor_type.h"

namespace vkp::graph {

class ProgramExchanges {
 public:
  struct Point {
    TensorType type;  // of the input and of the value
    const std::byte* input = nullptr;
    std::byte* value = nullptr;
    int recording = 0;  // the recording that ends with the input's copy
  };

  // --- built by compile() ---
  void add(const TensorType& type, const std::byte* input, std::byte* value) {
    points_.push_back({type, input, value});
  }
  // The next exchange's input is copied at the end of recording `recording`.
  void end_at(int recording) { points_.at(ended_++).recording = recording; }

  int count() const { return static_cast<int>(points_.size()); }
  const Point& point(int e) const { return points_.at(static_cast<std::size_t>(e)); }

  // The pending run: the first exchange not resumed, and whether it is stopped at one.
  int next() const { return next_; }
  bool stopped() const { return next_ < count(); }
  // A run is submitted (it goes up to exchange 0).
  void begin_run() { next_ = 0; }
  // Throws unless `e` is the exchange the pending run is at; `pending`: there is one.
  void check(int e, bool pending, const char* call) const;
  // Copies exchange e's input into `value` (reallocated only when its shape changes).
  void read(int e, Array& value) const;
  // Writes exchange e's value (the input's type; Error otherwise) and moves the run to
  // the next exchange; returns the run's part to submit.
  int write(int e, const Array& value);

 private:
  std::vector<Point> points_;
  std::size_t ended_ = 0;  // built: exchanges whose recording is known
  int next_ = 0;
};

}  // namespace vkp::graph
