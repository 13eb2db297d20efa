// What compile() settles before it plans storage (compile.cpp, ProgramBuilder's first
// stage): the execution order of the nodes a program needs, their concrete types from
// the feeds, and which command buffer delivers each bucket of segmented fetches.
// Internal to engine/graph.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/graph/graph.h"
#include "engine/graph/program.h"

namespace vkp::graph {

// Execution order: what the fetches and targets need (and the effects attached to what
// they need, Graph::attach_effect), in creation order (topological), then each effect
// placed as early as it may run: after its inputs, and after every other op that reads a
// variable it writes.
std::vector<int> schedule_nodes(const Graph& graph, const std::vector<Tensor>& fetches,
                                const std::vector<Tensor>& targets);

// Concrete types of the scheduled nodes (by node id) from the feeds' shapes; Error naming
// the node whose inference fails or the placeholder not fed.
std::vector<TensorType> concrete_types(const Graph& graph, const std::vector<int>& schedule,
                                       const std::vector<FeedSpec>& feeds);

// The bytes a tensor of `t` takes (at least one 32-bit word).
std::uint64_t bytes_of(const TensorType& t);

// The buckets of CompileOptions::segments and the schedule step after which each one is
// complete (nondecreasing, since buckets follow the schedule).
struct SegmentPlan {
  std::vector<std::vector<int>> buckets;  // fetch indices
  std::vector<int> end_step;
};
// `owner`: the node whose storage each node uses. Error(invalid_argument) for bad options.
SegmentPlan plan_segments(const Graph& graph, const std::vector<int>& schedule, const std::vector<Tensor>& fetches,
                          const std::vector<TensorType>& types, const std::vector<int>& owner,
                          const FetchSegments& options);

}  // namespace vkp::graph
