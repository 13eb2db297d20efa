#include "dataflow/fixed_size_data.h"

namespace vkp::dataflow {

FixedSizeData::FixedSizeData(DataFlowPtr df, std::size_t size, bool keep_state)
    : df_(std::move(df)), size_(size), keep_state_(keep_state) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "FixedSizeData: the dataflow is null");
}

void FixedSizeData::on_start_epoch() {
  count_ = 0;
  // With keep_state the flow's first epoch starts at its first next().
  if (!keep_state_) df_->start_epoch();
}

std::optional<Datapoint> FixedSizeData::on_next() {
  if (count_ == size_) return std::nullopt;
  std::optional<Datapoint> dp = df_->next();
  if (!dp) {
    df_->start_epoch();
    dp = df_->next();
    if (!dp)
      throw Error(ErrorCode::invalid_argument,
                  "FixedSizeData: the wrapped dataflow yielded an empty epoch; cannot fill an epoch of " +
                      std::to_string(size_) + " datapoints");
  }
  ++count_;
  return dp;
}

}  // namespace vkp::dataflow
