#include "vkpack/dataflow/batch_data.h"

#include <cstring>

namespace vkp::dataflow {
namespace {

void check_like_first(const std::vector<Datapoint>& points, std::size_t j, const std::string& who) {
  const Datapoint& first = points[0];
  const Datapoint& dp = points[j];
  if (dp.size() != first.size())
    throw Error(ErrorCode::invalid_argument,
                who + ": datapoint " + std::to_string(j) + " of the batch has " +
                    std::to_string(dp.size()) + " components, datapoint 0 has " +
                    std::to_string(first.size()) + "; every datapoint of a batch needs the same components");
  for (std::size_t c = 0; c < dp.size(); ++c) {
    if (dp[c].dtype() != first[c].dtype() || dp[c].shape() != first[c].shape())
      throw Error(ErrorCode::invalid_argument,
                  who + ": component " + std::to_string(c) + " of datapoint " + std::to_string(j) +
                      " of the batch is " + describe(dp[c]) + ", datapoint 0 has " + describe(first[c]) +
                      "; a component must have one shape and dtype across the batch");
  }
}

}  // namespace

Datapoint stack_datapoints(const std::vector<Datapoint>& points, const std::string& who) {
  VKP_CHECK(!points.empty(), "stack_datapoints needs at least one datapoint");
  for (std::size_t j = 1; j < points.size(); ++j) check_like_first(points, j, who);
  const std::int64_t count = static_cast<std::int64_t>(points.size());
  Datapoint batch;
  batch.reserve(points[0].size());
  for (std::size_t c = 0; c < points[0].size(); ++c) {
    const Array& first = points[0][c];
    std::vector<std::int64_t> dims{count};
    dims.insert(dims.end(), first.shape().dims().begin(), first.shape().dims().end());
    Array stacked(first.dtype(), Shape(std::move(dims)));
    const std::size_t stride = first.nbytes();
    std::byte* out = stacked.bytes().data();
    for (std::size_t j = 0; j < points.size(); ++j)
      if (stride) std::memcpy(out + j * stride, points[j][c].bytes().data(), stride);
    batch.push_back(std::move(stacked));
  }
  return batch;
}

BatchData::BatchData(DataFlowPtr df, std::size_t batch_size, bool remainder)
    : df_(std::move(df)), batch_size_(batch_size), remainder_(remainder) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "BatchData: the dataflow to batch is null");
  require(batch_size_ > 0, ErrorCode::invalid_argument, "BatchData: batch_size must be at least 1, got 0");
}

std::optional<std::size_t> BatchData::size() const {
  const std::optional<std::size_t> n = df_->size();
  if (!n) return std::nullopt;
  return remainder_ ? (*n + batch_size_ - 1) / batch_size_ : *n / batch_size_;
}

void BatchData::on_start_epoch() { df_->start_epoch(); }

std::optional<Datapoint> BatchData::on_next() {
  pending_.clear();
  while (pending_.size() < batch_size_) {
    std::optional<Datapoint> dp = df_->next();
    if (!dp) break;
    pending_.push_back(std::move(*dp));
  }
  if (pending_.empty() || (pending_.size() < batch_size_ && !remainder_)) return std::nullopt;
  Datapoint batch = stack_datapoints(pending_);
  pending_.clear();
  return batch;
}

}  // namespace vkp::dataflow
