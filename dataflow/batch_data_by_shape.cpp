#include "dataflow/batch_data_by_shape.h"

#include <algorithm>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "dataflow/batch_data.h"

namespace vkp::dataflow {

BatchDataByShape::BatchDataByShape(DataFlowPtr df, std::size_t batch_size, std::size_t component)
    : df_(std::move(df)), batch_size_(batch_size), component_(component) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "BatchDataByShape: the input dataflow is null");
  require(batch_size_ > 0, ErrorCode::invalid_argument, "BatchDataByShape: batch_size must be positive");
}

void BatchDataByShape::on_start_epoch() {
  groups_.clear();
  df_->start_epoch();
}

std::optional<Datapoint> BatchDataByShape::on_next() {
  while (std::optional<Datapoint> dp = df_->next()) {
    require(component_ < dp->size(), ErrorCode::invalid_argument,
            fmt::format("BatchDataByShape: groups by component {}, but a datapoint has {} components", component_,
                        dp->size()));
    std::vector<Datapoint>& group = groups_[(*dp)[component_].shape().dims()];
    group.push_back(std::move(*dp));
    if (group.size() == batch_size_) {
      Datapoint batch = stack_datapoints(group, "BatchDataByShape");
      group.clear();
      return batch;
    }
  }
  groups_.clear();  // the partial groups of this epoch
  return std::nullopt;
}

DataFromQueue::DataFromQueue(std::shared_ptr<BoundedQueue<Datapoint>> queue) : queue_(std::move(queue)) {
  require(queue_ != nullptr, ErrorCode::invalid_argument, "DataFromQueue: the queue is null");
}

std::optional<Datapoint> DataFromQueue::on_next() {
  if (ready_.empty()) {
    if (!queue_->pop_some(ready_, 64)) return std::nullopt;
    std::reverse(ready_.begin(), ready_.end());
  }
  Datapoint dp = std::move(ready_.back());
  ready_.pop_back();
  return dp;
}

}  // namespace vkp::dataflow
