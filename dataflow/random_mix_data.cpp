#include "dataflow/random_mix_data.h"

#include "dataflow/permutation.h"

namespace vkp::dataflow {

RandomMixData::RandomMixData(std::vector<DataFlowPtr> flows, std::uint64_t seed)
    : flows_(std::move(flows)), seed_(seed) {
  for (std::size_t i = 0; i < flows_.size(); ++i) {
    require(flows_[i] != nullptr, ErrorCode::invalid_argument, "RandomMixData: flow " + std::to_string(i) + " is null");
    const std::optional<std::size_t> n = flows_[i]->size();
    require(n.has_value(), ErrorCode::invalid_argument,
            "RandomMixData: flow " + std::to_string(i) +
                " does not know its size; every flow must, to draw the mixing order");
    sizes_.push_back(*n);
    total_ += *n;
  }
}

void RandomMixData::on_reset_state() {
  rng_ = Rng(seed_);
  for (DataFlowPtr& df : flows_) df->reset_state();
}

void RandomMixData::on_start_epoch() {
  picks_.clear();
  picks_.reserve(total_);
  for (std::size_t i = 0; i < flows_.size(); ++i) picks_.insert(picks_.end(), sizes_[i], static_cast<std::uint32_t>(i));
  shuffle(std::span<std::uint32_t>(picks_), rng_);
  taken_.assign(flows_.size(), 0);
  position_ = 0;
  for (DataFlowPtr& df : flows_) df->start_epoch();
}

std::optional<Datapoint> RandomMixData::on_next() {
  if (position_ == picks_.size()) return std::nullopt;
  const std::size_t i = picks_[position_++];
  std::optional<Datapoint> dp = flows_[i]->next();
  if (!dp)
    throw Error(ErrorCode::bad_data, "RandomMixData: flow " + std::to_string(i) + " ended after " +
                                         std::to_string(taken_[i]) + " datapoints, but its size() is " +
                                         std::to_string(sizes_[i]));
  ++taken_[i];
  return dp;
}

}  // namespace vkp::dataflow
