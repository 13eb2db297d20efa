#include "dataflow/locally_shuffle_data.h"

namespace vkp::dataflow {

LocallyShuffleData::LocallyShuffleData(DataFlowPtr df, std::size_t buffer_size, std::uint64_t seed,
                                       std::size_t reuse)
    : df_(std::move(df)), buffer_size_(buffer_size), seed_(seed), reuse_(reuse) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "LocallyShuffleData: the dataflow is null");
  require(buffer_size_ >= 1, ErrorCode::invalid_argument,
          "LocallyShuffleData: buffer_size must be at least 1, got 0");
  require(reuse_ >= 1, ErrorCode::invalid_argument, "LocallyShuffleData: reuse must be at least 1, got 0");
}

std::optional<std::size_t> LocallyShuffleData::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!n) return std::nullopt;
  return *n * reuse_;
}

void LocallyShuffleData::on_reset_state() {
  rng_ = Rng(seed_);
  df_->reset_state();
  buffer_.reserve(buffer_size_ + reuse_);
}

void LocallyShuffleData::on_start_epoch() {
  buffer_.clear();
  input_done_ = false;
  df_->start_epoch();
}

std::optional<Datapoint> LocallyShuffleData::on_next() {
  while (!input_done_ && buffer_.size() < buffer_size_) {
    std::optional<Datapoint> dp = df_->next();
    if (!dp) {
      input_done_ = true;
      break;
    }
    for (std::size_t r = 1; r < reuse_; ++r) buffer_.push_back(*dp);
    buffer_.push_back(std::move(*dp));
  }
  if (buffer_.empty()) return std::nullopt;
  const std::size_t pick = static_cast<std::size_t>(rng_.below(buffer_.size()));
  std::swap(buffer_[pick], buffer_.back());
  Datapoint out = std::move(buffer_.back());
  buffer_.pop_back();
  return out;
}

}  // namespace vkp::dataflow
