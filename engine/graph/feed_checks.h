// FeedChecks: what a compiled program accepts as each feed, and the checks of a value
// before it is written to the device: the compiled dtype and shape, and for a feed that
// a gather reads as indices, every index in range (an index out of range would read or
// write outside the gathered tensor on the device).
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/graph.h"

namespace vkp::graph {

struct FeedSpec {
  Tensor placeholder;
  TensorType type;  // concrete: the shape that will be fed
};

class FeedChecks {
 public:
  FeedChecks() = default;
  // `feeds` in the program's order; the gathers of `schedule` (node ids of `graph`) whose
  // indices are a feed (through views) bound it; `types`: concrete types by node id.
  FeedChecks(std::vector<FeedSpec> feeds, const Graph& graph, const std::vector<int>& schedule,
             const std::vector<TensorType>& types);

  const std::vector<FeedSpec>& specs() const { return feeds_; }
  std::size_t size() const { return feeds_.size(); }
  // Throws Error(invalid_argument) naming the feed (and the gather) when `value` is not
  // what feed `index` takes.
  void check(std::size_t index, const Array& value) const;

 private:
  // By feed: an i32 feed that a gather reads as indices must lie in [0, limit) (the
  // smallest limit of its readers, -1 for none); `reader` names that gather.
  struct IndexLimit {
    std::int64_t limit = -1;
    std::string reader;
  };
  std::vector<FeedSpec> feeds_;
  std::vector<std::string> names_;  // the placeholders' names, kept apart from the graph
  std::vector<IndexLimit> index_limits_;
};

}  // namespace vkp::graph
