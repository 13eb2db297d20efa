#include "dataflow/select_component.h"

#include <algorithm>

#include "dataflow/map_data.h"

namespace vkp::dataflow {

SelectComponent::SelectComponent(DataFlowPtr df, std::vector<std::size_t> indices)
    : df_(std::move(df)), indices_(std::move(indices)), last_use_(indices_.size()) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "SelectComponent: the dataflow is null");
  for (std::size_t k = 0; k < indices_.size(); ++k)
    last_use_[k] = std::find(indices_.begin() + static_cast<std::ptrdiff_t>(k) + 1, indices_.end(),
                             indices_[k]) == indices_.end();
}

std::optional<Datapoint> SelectComponent::on_next() {
  std::optional<Datapoint> dp = df_->next();
  if (!dp) return std::nullopt;
  Datapoint out;
  out.reserve(indices_.size());
  for (std::size_t k = 0; k < indices_.size(); ++k) {
    require_component(*dp, indices_[k], "SelectComponent");
    Array& component = (*dp)[indices_[k]];
    if (last_use_[k])
      out.push_back(std::move(component));
    else
      out.push_back(component);
  }
  return out;
}

}  // namespace vkp::dataflow
