#include "dataflow/random_choose_data.h"

#include <algorithm>
#include <cmath>

namespace vkp::dataflow {

RandomChooseData::RandomChooseData(std::vector<DataFlowPtr> flows, std::vector<double> weights, std::uint64_t seed)
    : flows_(std::move(flows)), seed_(seed) {
  require(!flows_.empty(), ErrorCode::invalid_argument, "RandomChooseData: needs at least one flow, got none");
  for (std::size_t i = 0; i < flows_.size(); ++i)
    require(flows_[i] != nullptr, ErrorCode::invalid_argument,
            "RandomChooseData: flow " + std::to_string(i) + " is null");
  if (weights.empty()) weights.assign(flows_.size(), 1.0);
  require(weights.size() == flows_.size(), ErrorCode::invalid_argument,
          "RandomChooseData: " + std::to_string(flows_.size()) + " flows but " + std::to_string(weights.size()) +
              " weights; give one weight per flow");
  double total = 0;
  for (std::size_t i = 0; i < weights.size(); ++i) {
    require(weights[i] >= 0 && std::isfinite(weights[i]), ErrorCode::invalid_argument,
            "RandomChooseData: weight " + std::to_string(i) + " is " + std::to_string(weights[i]) +
                "; weights must be finite and >= 0");
    total += weights[i];
  }
  require(total > 0, ErrorCode::invalid_argument, "RandomChooseData: the weights sum to 0; at least one must be > 0");
  double running = 0;
  for (double w : weights) cumulative_.push_back(running += w / total);
}

void RandomChooseData::on_reset_state() {
  rng_ = Rng(seed_);
  for (DataFlowPtr& df : flows_) df->reset_state();
}

void RandomChooseData::on_start_epoch() {
  for (DataFlowPtr& df : flows_) df->start_epoch();
}

std::optional<Datapoint> RandomChooseData::on_next() {
  const double u = rng_.uniform();
  // The first flow whose running sum exceeds u; a zero weight is never picked.
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  const std::size_t pick = it == cumulative_.end() ? flows_.size() - 1
                                                   : static_cast<std::size_t>(it - cumulative_.begin());
  return flows_[pick]->next();
}

}  // namespace vkp::dataflow
