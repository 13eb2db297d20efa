// Augmentors made of augmentors: a sequence, a random application, a random choice, a
// random order; and the plainest ones: none, and a function of the image.
#pragma once

#include <functional>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// Applies each augmentor in order.
class AugmentorList : public ImageAugmentor {
 public:
  explicit AugmentorList(std::vector<AugmentorPtr> augmentors);
  Array apply(Array image, Rng& rng) const override;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::vector<AugmentorPtr> augmentors_;
};

// Applies `augmentor` with probability `prob`, else passes the image through.
class RandomApplyAug : public ImageAugmentor {
 public:
  RandomApplyAug(AugmentorPtr augmentor, double prob);
  Array apply(Array image, Rng& rng) const override;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  AugmentorPtr augmentor_;
  double prob_;
};

// Applies one augmentor picked at random by `weights` (empty: all equal).
class RandomChooseAug : public ImageAugmentor {
 public:
  explicit RandomChooseAug(std::vector<AugmentorPtr> augmentors, std::vector<double> weights = {});
  Array apply(Array image, Rng& rng) const override;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::size_t pick(Rng& rng) const;

  std::vector<AugmentorPtr> augmentors_;
  std::vector<double> cumulative_;
};

// tensorpack's RandomOrderAug: every augmentor, in an order drawn uniformly from the
// permutations each time.
class RandomOrderAug : public ImageAugmentor {
 public:
  explicit RandomOrderAug(std::vector<AugmentorPtr> augmentors);
  Array apply(Array image, Rng& rng) const override;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::vector<std::size_t> order(Rng& rng) const;

  std::vector<AugmentorPtr> augmentors_;
};

// tensorpack's Identity: the image and its points as they are. For a slot of
// RandomChooseAug that leaves the image alone.
class Identity : public PointAugmentor {
 public:
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;
};

// tensorpack's MapImage: `image` applied to every image, draws nothing. Points move by
// `points` when given; without it apply_with_points is Error(unsupported) (the function
// may move pixels).
class MapImage : public ImageAugmentor {
 public:
  explicit MapImage(std::function<Array(Array)> image, std::function<void(Array&)> points = {});
  Array apply(Array image, Rng& rng) const override;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::function<Array(Array)> image_;
  std::function<void(Array&)> points_;
};

}  // namespace vkp::dataflow
