#include "dataflow/repeated_data.h"

namespace vkp::dataflow {

RepeatedData::RepeatedData(DataFlowPtr df, std::optional<std::size_t> times)
    : df_(std::move(df)), times_(times) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "RepeatedData: the dataflow to repeat is null");
}

std::optional<std::size_t> RepeatedData::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!times_ || !n) return std::nullopt;
  return *n * *times_;
}

void RepeatedData::on_start_epoch() {
  passes_done_ = 0;
  pass_yielded_ = false;
  df_->start_epoch();
}

std::optional<Datapoint> RepeatedData::on_next() {
  if (times_ && *times_ == 0) return std::nullopt;
  while (true) {
    if (std::optional<Datapoint> dp = df_->next()) {
      pass_yielded_ = true;
      return dp;
    }
    ++passes_done_;
    if (times_ && passes_done_ == *times_) return std::nullopt;
    if (!times_ && !pass_yielded_) return std::nullopt;
    pass_yielded_ = false;
    df_->start_epoch();
  }
}

RepeatedDataPoint::RepeatedDataPoint(DataFlowPtr df, std::size_t times) : df_(std::move(df)), times_(times) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "RepeatedDataPoint: the dataflow is null");
  require(times_ >= 1, ErrorCode::invalid_argument, "RepeatedDataPoint: times must be at least 1, got 0");
}

std::optional<std::size_t> RepeatedDataPoint::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!n) return std::nullopt;
  return *n * times_;
}

void RepeatedDataPoint::on_start_epoch() {
  left_ = 0;
  df_->start_epoch();
}

std::optional<Datapoint> RepeatedDataPoint::on_next() {
  if (left_ == 0) {
    std::optional<Datapoint> dp = df_->next();
    if (!dp) return std::nullopt;
    current_ = std::move(*dp);
    left_ = times_;
  }
  --left_;
  // The last repetition gives the datapoint away instead of copying it.
  if (left_ == 0) return std::move(current_);
  return current_;
}

}  // namespace vkp::dataflow
