#include "dataflow/augment_image_component.h"

#include "dataflow/map_data.h"

namespace vkp::dataflow {

namespace {

// The components `indices` of `dp`, each augmented with a copy of `rng` (which then
// stands where the last copy stopped).
void augment_together(const AugmentorList& list, const std::vector<std::size_t>& indices, Datapoint& dp, Rng& rng,
                      const char* who) {
  std::int64_t h = -1, w = -1;
  for (std::size_t i : indices) {
    require_component(dp, i, who);
    const ImageDims d = image_dims(dp[i], who);
    if (h >= 0 && (d.height != h || d.width != w))
      throw Error(ErrorCode::invalid_argument, std::string(who) + ": component " + std::to_string(i) + " is " +
                                                   describe(dp[i]) + ", component " + std::to_string(indices[0]) +
                                                   " is " + describe(dp[indices[0]]) + "; they must be one size");
    h = d.height, w = d.width;
  }
  Rng after = rng;
  for (std::size_t i : indices) {
    Rng copy = rng;
    dp[i] = list.apply(std::move(dp[i]), copy);
    after = copy;
  }
  rng = after;
}

void augment_with_points(const AugmentorList& list, std::size_t image, std::size_t points, Datapoint& dp, Rng& rng,
                         const char* who) {
  require_component(dp, image, who);
  require_component(dp, points, who);
  require(image != points, ErrorCode::invalid_argument, std::string(who) + ": the image and the points are one component");
  dp[image] = list.apply_with_points(std::move(dp[image]), dp[points], rng);
}

}  // namespace

AugmentImageCoordinates::AugmentImageCoordinates(DataFlowPtr df, std::vector<AugmentorPtr> augmentors,
                                                 std::size_t image_index, std::size_t points_index, std::uint64_t seed)
    : df_(std::move(df)), augmentors_(std::move(augmentors)), image_index_(image_index), points_index_(points_index),
      seed_(seed) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "AugmentImageCoordinates: the dataflow is null");
}

void AugmentImageCoordinates::on_reset_state() {
  count_ = 0;
  df_->reset_state();
}

std::optional<Datapoint> AugmentImageCoordinates::on_next() {
  std::optional<Datapoint> dp = df_->next();
  if (!dp) return std::nullopt;
  Rng rng(seed_, count_++);
  augment_with_points(augmentors_, image_index_, points_index_, *dp, rng, "AugmentImageCoordinates");
  return dp;
}

RandomMapFunction augment_coordinates(std::vector<AugmentorPtr> augmentors, std::size_t image_index,
                                      std::size_t points_index) {
  auto list = std::make_shared<const AugmentorList>(std::move(augmentors));
  return [list, image_index, points_index](Datapoint dp, Rng& rng) -> std::optional<Datapoint> {
    augment_with_points(*list, image_index, points_index, dp, rng, "augment_coordinates");
    return dp;
  };
}

AugmentImageComponents::AugmentImageComponents(DataFlowPtr df, std::vector<AugmentorPtr> augmentors,
                                               std::vector<std::size_t> indices, std::uint64_t seed)
    : df_(std::move(df)), augmentors_(std::move(augmentors)), indices_(std::move(indices)), seed_(seed) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "AugmentImageComponents: the dataflow is null");
  require(!indices_.empty(), ErrorCode::invalid_argument, "AugmentImageComponents: no components to augment");
}

void AugmentImageComponents::on_reset_state() {
  count_ = 0;
  df_->reset_state();
}

std::optional<Datapoint> AugmentImageComponents::on_next() {
  std::optional<Datapoint> dp = df_->next();
  if (!dp) return std::nullopt;
  Rng rng(seed_, count_++);
  augment_together(augmentors_, indices_, *dp, rng, "AugmentImageComponents");
  return dp;
}

RandomMapFunction augment_component(std::vector<AugmentorPtr> augmentors, std::size_t index) {
  return augment_components(std::move(augmentors), {index});
}

RandomMapFunction augment_components(std::vector<AugmentorPtr> augmentors, std::vector<std::size_t> indices) {
  auto list = std::make_shared<const AugmentorList>(std::move(augmentors));
  return [list, indices](Datapoint dp, Rng& rng) -> std::optional<Datapoint> {
    augment_together(*list, indices, dp, rng, "augment_components");
    return dp;
  };
}

}  // namespace vkp::dataflow
