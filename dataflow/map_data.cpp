#include "dataflow/map_data.h"

namespace vkp::dataflow {

void require_component(const Datapoint& dp, std::size_t index, const std::string& who) {
  if (index >= dp.size())
    throw Error(ErrorCode::invalid_argument,
                who + ": component " + std::to_string(index) + " asked for, but the datapoint has " +
                    std::to_string(dp.size()) + " components");
}

MapData::MapData(DataFlowPtr df, MapFunction func) : df_(std::move(df)), func_(std::move(func)) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "MapData: the dataflow to map is null");
  require(static_cast<bool>(func_), ErrorCode::invalid_argument, "MapData: the function is empty");
}

std::optional<Datapoint> MapData::on_next() {
  while (std::optional<Datapoint> dp = df_->next()) {
    std::optional<Datapoint> mapped = func_(std::move(*dp));
    if (mapped) return mapped;
  }
  return std::nullopt;
}

MapDataComponent::MapDataComponent(DataFlowPtr df, ComponentFunction func, std::size_t index)
    : df_(std::move(df)), func_(std::move(func)), index_(index) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "MapDataComponent: the dataflow to map is null");
  require(static_cast<bool>(func_), ErrorCode::invalid_argument, "MapDataComponent: the function is empty");
}

std::optional<Datapoint> MapDataComponent::on_next() {
  while (std::optional<Datapoint> dp = df_->next()) {
    require_component(*dp, index_, "MapDataComponent");
    std::optional<Array> mapped = func_(std::move((*dp)[index_]));
    if (!mapped) continue;
    (*dp)[index_] = std::move(*mapped);
    return dp;
  }
  return std::nullopt;
}

}  // namespace vkp::dataflow
