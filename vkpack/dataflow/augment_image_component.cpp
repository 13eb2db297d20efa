#include "vkpack/dataflow/augment_image_component.h"

#include "vkpack/dataflow/map_data.h"

namespace vkp::dataflow {

AugmentImageComponent::AugmentImageComponent(DataFlowPtr df, std::vector<AugmentorPtr> augmentors,
                                             std::size_t index, std::uint64_t seed)
    : df_(std::move(df)), augmentors_(std::move(augmentors)), index_(index), seed_(seed) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "AugmentImageComponent: the dataflow is null");
}

void AugmentImageComponent::on_reset_state() {
  count_ = 0;
  df_->reset_state();
}

std::optional<Datapoint> AugmentImageComponent::on_next() {
  std::optional<Datapoint> dp = df_->next();
  if (!dp) return std::nullopt;
  require_component(*dp, index_, "AugmentImageComponent");
  Rng rng(seed_, count_++);
  (*dp)[index_] = augmentors_.apply(std::move((*dp)[index_]), rng);
  return dp;
}

RandomMapFunction augment_component(std::vector<AugmentorPtr> augmentors, std::size_t index) {
  auto list = std::make_shared<const AugmentorList>(std::move(augmentors));
  return [list, index](Datapoint dp, Rng& rng) -> std::optional<Datapoint> {
    require_component(dp, index, "augment_component");
    dp[index] = list->apply(std::move(dp[index]), rng);
    return dp;
  };
}

}  // namespace vkp::dataflow
