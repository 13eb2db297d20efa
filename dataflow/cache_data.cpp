#include "dataflow/cache_data.h"

#include <numeric>

#include "dataflow/permutation.h"

namespace vkp::dataflow {

CacheData::CacheData(DataFlowPtr df, bool shuffle, std::uint64_t seed)
    : df_(std::move(df)), shuffle_(shuffle), seed_(seed) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "CacheData: the dataflow is null");
}

std::optional<std::size_t> CacheData::size() const {
  if (complete_) return cache_.size();
  return df_->size();
}

void CacheData::on_reset_state() {
  rng_ = Rng(seed_);
  df_->reset_state();
}

void CacheData::on_start_epoch() {
  position_ = 0;
  if (complete_) {
    if (shuffle_) {
      order_ = random_permutation(cache_.size(), rng_);
    } else {
      order_.resize(cache_.size());
      std::iota(order_.begin(), order_.end(), std::size_t{0});
    }
    return;
  }
  cache_.clear();
  df_->start_epoch();
}

std::optional<Datapoint> CacheData::on_next() {
  if (complete_) {
    if (position_ == order_.size()) return std::nullopt;
    return cache_[order_[position_++]];
  }
  std::optional<Datapoint> dp = df_->next();
  if (!dp) {
    complete_ = true;
    return std::nullopt;
  }
  cache_.push_back(*dp);
  return dp;
}

}  // namespace vkp::dataflow
