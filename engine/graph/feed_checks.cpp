#include "engine/graph/feed_checks.h"

#include <fmt/format.h>

#include "core/error.h"
#include "engine/graph/internal/op_def.h"

namespace vkp::graph {

FeedChecks::FeedChecks(std::vector<FeedSpec> feeds, const Graph& graph, const std::vector<int>& schedule,
                       const std::vector<TensorType>& types)
    : feeds_(std::move(feeds)), index_limits_(feeds_.size()) {
  std::map<int, std::size_t> feed_index;  // placeholder id -> feed
  for (std::size_t i = 0; i < feeds_.size(); ++i) {
    names_.push_back(feeds_[i].placeholder.name());
    feed_index[feeds_[i].placeholder.id()] = i;
  }
  for (int id : schedule) {
    const Node& n = graph.node(id);
    if (n.op != OpKind::gather) continue;
    int source = n.inputs[1];
    while (op_def(graph.node(source).op).view) source = graph.node(source).inputs[0];
    const auto fed = feed_index.find(source);
    if (fed == feed_index.end()) continue;
    const std::int64_t rows = types[static_cast<std::size_t>(n.inputs[0])].dim(std::get<AxisAttrs>(n.attrs).axis);
    IndexLimit& bound = index_limits_[fed->second];
    if (bound.limit < 0 || rows < bound.limit) bound = {rows, n.name};
  }
}

void FeedChecks::check(std::size_t index, const Array& value) const {
  VKP_CHECK(index < feeds_.size(), fmt::format("feed {} of a program of {} feeds", index, feeds_.size()));
  const TensorType& want = feeds_[index].type;
  if (!has_type(value, want))
    throw Error(ErrorCode::invalid_argument, "feed for '" + names_[index] + "' is " + describe(value) +
                                                 "; this program was compiled for " + to_string(want));
  const IndexLimit& bound = index_limits_[index];
  if (bound.limit < 0) return;
  const std::span<const std::int32_t> values = value.data<std::int32_t>();
  for (std::size_t k = 0; k < values.size(); ++k)
    if (values[k] < 0 || values[k] >= bound.limit)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("{}: index {} at position {} of feed '{}' is outside [0, {})", bound.reader, values[k], k,
                              names_[index], bound.limit));
}

}  // namespace vkp::graph
