#include "dataflow/augmentor_list.h"

#include <algorithm>
#include <cmath>
#include <string>

namespace vkp::dataflow {
namespace {

void require_all(const std::vector<AugmentorPtr>& augmentors, const char* who) {
  for (std::size_t i = 0; i < augmentors.size(); ++i)
    require(augmentors[i] != nullptr, ErrorCode::invalid_argument,
            std::string(who) + ": augmentor " + std::to_string(i) + " is null");
}

}  // namespace

AugmentorList::AugmentorList(std::vector<AugmentorPtr> augmentors) : augmentors_(std::move(augmentors)) {
  require_all(augmentors_, "AugmentorList");
}

Array AugmentorList::apply(Array image, Rng& rng) const {
  for (const AugmentorPtr& a : augmentors_) image = a->apply(std::move(image), rng);
  return image;
}

Array AugmentorList::apply_with_points(Array image, Array& points, Rng& rng) const {
  for (const AugmentorPtr& a : augmentors_) image = a->apply_with_points(std::move(image), points, rng);
  return image;
}

RandomApplyAug::RandomApplyAug(AugmentorPtr augmentor, double prob) : augmentor_(std::move(augmentor)), prob_(prob) {
  require(augmentor_ != nullptr, ErrorCode::invalid_argument, "RandomApplyAug: the augmentor is null");
  require(prob_ >= 0 && prob_ <= 1, ErrorCode::invalid_argument,
          "RandomApplyAug: prob must be in [0, 1], got " + std::to_string(prob_));
}

Array RandomApplyAug::apply(Array image, Rng& rng) const {
  if (rng.uniform() < prob_) return augmentor_->apply(std::move(image), rng);
  return image;
}

Array RandomApplyAug::apply_with_points(Array image, Array& points, Rng& rng) const {
  if (rng.uniform() < prob_) return augmentor_->apply_with_points(std::move(image), points, rng);
  move_points(points, {1, 0, 0, 0, 1, 0}, "RandomApplyAug");  // checks them, moves nothing
  return image;
}

RandomChooseAug::RandomChooseAug(std::vector<AugmentorPtr> augmentors, std::vector<double> weights)
    : augmentors_(std::move(augmentors)) {
  require(!augmentors_.empty(), ErrorCode::invalid_argument, "RandomChooseAug: needs at least one augmentor");
  require_all(augmentors_, "RandomChooseAug");
  if (weights.empty()) weights.assign(augmentors_.size(), 1.0);
  require(weights.size() == augmentors_.size(), ErrorCode::invalid_argument,
          "RandomChooseAug: " + std::to_string(augmentors_.size()) + " augmentors but " +
              std::to_string(weights.size()) + " weights; give one weight per augmentor");
  double total = 0;
  for (double w : weights) {
    require(w >= 0 && std::isfinite(w), ErrorCode::invalid_argument,
            "RandomChooseAug: weights must be finite and >= 0, got " + std::to_string(w));
    total += w;
  }
  require(total > 0, ErrorCode::invalid_argument, "RandomChooseAug: the weights sum to 0");
  double running = 0;
  for (double w : weights) cumulative_.push_back(running += w / total);
}

std::size_t RandomChooseAug::pick(Rng& rng) const {
  const double u = rng.uniform();
  const auto it = std::upper_bound(cumulative_.begin(), cumulative_.end(), u);
  return it == cumulative_.end() ? augmentors_.size() - 1 : static_cast<std::size_t>(it - cumulative_.begin());
}

Array RandomChooseAug::apply(Array image, Rng& rng) const { return augmentors_[pick(rng)]->apply(std::move(image), rng); }

Array RandomChooseAug::apply_with_points(Array image, Array& points, Rng& rng) const {
  return augmentors_[pick(rng)]->apply_with_points(std::move(image), points, rng);
}

RandomOrderAug::RandomOrderAug(std::vector<AugmentorPtr> augmentors) : augmentors_(std::move(augmentors)) {
  require_all(augmentors_, "RandomOrderAug");
}

// Fisher-Yates from the back: each permutation has probability 1 / n!.
std::vector<std::size_t> RandomOrderAug::order(Rng& rng) const {
  std::vector<std::size_t> order(augmentors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (std::size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

Array RandomOrderAug::apply(Array image, Rng& rng) const {
  for (std::size_t i : order(rng)) image = augmentors_[i]->apply(std::move(image), rng);
  return image;
}

Array RandomOrderAug::apply_with_points(Array image, Array& points, Rng& rng) const {
  for (std::size_t i : order(rng)) image = augmentors_[i]->apply_with_points(std::move(image), points, rng);
  return image;
}

Array Identity::apply_with_points(Array image, Array& points, Rng&) const {
  image_dims(image, "Identity");
  move_points(points, {1, 0, 0, 0, 1, 0}, "Identity");  // checks the points' shape
  return image;
}

MapImage::MapImage(std::function<Array(Array)> image, std::function<void(Array&)> points)
    : image_(std::move(image)), points_(std::move(points)) {
  require(static_cast<bool>(image_), ErrorCode::invalid_argument, "MapImage: the image function is empty");
}

Array MapImage::apply(Array image, Rng&) const { return image_(std::move(image)); }

Array MapImage::apply_with_points(Array image, Array& points, Rng&) const {
  if (!points_)
    throw Error(ErrorCode::unsupported, "MapImage: made without a function for points, it cannot move them");
  points_(points);
  return image_(std::move(image));
}

}  // namespace vkp::dataflow
