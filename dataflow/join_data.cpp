#include "dataflow/join_data.h"

#include <algorithm>
#include <iterator>

#include "core/log.h"

namespace vkp::dataflow {

JoinData::JoinData(std::vector<DataFlowPtr> flows) : flows_(std::move(flows)) {
  require(!flows_.empty(), ErrorCode::invalid_argument, "JoinData: needs at least one flow, got none");
  for (std::size_t i = 0; i < flows_.size(); ++i)
    require(flows_[i] != nullptr, ErrorCode::invalid_argument, "JoinData: flow " + std::to_string(i) + " is null");
  const std::optional<std::size_t> first = flows_[0]->size();
  for (std::size_t i = 1; i < flows_.size(); ++i) {
    const std::optional<std::size_t> n = flows_[i]->size();
    if (first && n && *n != *first)
      log_warn("JoinData: flow {} has {} datapoints, flow 0 has {}; epochs stop at the shortest", i, *n, *first);
  }
}

std::optional<std::size_t> JoinData::size() const {
  std::optional<std::size_t> smallest;
  for (const DataFlowPtr& df : flows_) {
    const std::optional<std::size_t> n = df->size();
    if (!n) return std::nullopt;
    smallest = smallest ? std::min(*smallest, *n) : *n;
  }
  return smallest;
}

void JoinData::on_reset_state() {
  for (DataFlowPtr& df : flows_) df->reset_state();
}

void JoinData::on_start_epoch() {
  for (DataFlowPtr& df : flows_) df->start_epoch();
}

std::optional<Datapoint> JoinData::on_next() {
  Datapoint joined;
  for (DataFlowPtr& df : flows_) {
    std::optional<Datapoint> dp = df->next();
    if (!dp) return std::nullopt;
    std::move(dp->begin(), dp->end(), std::back_inserter(joined));
  }
  return joined;
}

}  // namespace vkp::dataflow
