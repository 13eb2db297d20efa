#include "dataflow/concat_data.h"

namespace vkp::dataflow {

ConcatData::ConcatData(std::vector<DataFlowPtr> flows) : flows_(std::move(flows)) {
  for (std::size_t i = 0; i < flows_.size(); ++i)
    require(flows_[i] != nullptr, ErrorCode::invalid_argument,
            "ConcatData: flow " + std::to_string(i) + " is null");
}

std::optional<std::size_t> ConcatData::size() const {
  std::size_t total = 0;
  for (const DataFlowPtr& df : flows_) {
    const std::optional<std::size_t> n = df->size();
    if (!n) return std::nullopt;
    total += *n;
  }
  return total;
}

void ConcatData::on_reset_state() {
  for (DataFlowPtr& df : flows_) df->reset_state();
}

void ConcatData::on_start_epoch() {
  current_ = 0;
  if (!flows_.empty()) flows_[0]->start_epoch();
}

std::optional<Datapoint> ConcatData::on_next() {
  while (current_ < flows_.size()) {
    if (std::optional<Datapoint> dp = flows_[current_]->next()) return dp;
    if (++current_ < flows_.size()) flows_[current_]->start_epoch();
  }
  return std::nullopt;
}

}  // namespace vkp::dataflow
