// Augmentors whose output size is drawn or set: tensorpack's RandomResize,
// RandomCropRandomShape, CenterPaste and RandomPaste. Each moves points as it moves
// pixels (apply_with_points).
#pragma once

#include <array>
#include <optional>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// tensorpack's RandomResize: a bilinear resize (as Resize) to a width drawn from
// `xrange` and a height from `yrange`, each a ratio of the old extent (ratios = true,
// tensorpack's float ranges) or a size in pixels (its integer ranges), rounded to the
// nearest pixel and at least `minimum` (width, height). With aspect_ratio_thres 0 the
// height follows the width (no yrange); otherwise a draw whose aspect ratio moves by
// aspect_ratio_thres or more (relative) is drawn again, and after 50 such draws the image
// passes unchanged, with a warning. u8 or f32 images.
struct RandomResizeOptions {
  std::array<double, 2> xrange{0.8, 1.2};
  std::optional<std::array<double, 2>> yrange;
  bool ratios = true;
  std::array<std::int64_t, 2> minimum{0, 0};
  double aspect_ratio_thres = 0.15;
};
class RandomResize : public PointAugmentor {
 public:
  explicit RandomResize(RandomResizeOptions options);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  RandomResizeOptions o_;
};

// tensorpack's RandomCropRandomShape: a crop of height drawn uniformly from [hmin, hmax]
// and width from [wmin, wmax] (0: the image's extent; larger ones are cut to it), drawn
// again while either side exceeds the other by more than max_aspect_ratio (0: any).
// The crop's top-left corner is drawn from [0, H - h) and [0, W - w) (0 where the crop
// is as large as the image), as tensorpack's randint does. Any dtype.
class RandomCropRandomShape : public PointAugmentor {
 public:
  RandomCropRandomShape(std::int64_t wmin, std::int64_t hmin, std::int64_t wmax = 0, std::int64_t hmax = 0,
                        double max_aspect_ratio = 0);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t wmin_, hmin_, wmax_, hmax_;
  double max_aspect_ratio_;
};

// tensorpack's CenterPaste: the image pasted at the centre (rounded towards the top left)
// of a height x width canvas filled with `fill` (its ConstantBackgroundFiller); the
// image must fit. u8 or f32 images.
class CenterPaste : public PointAugmentor {
 public:
  CenterPaste(std::int64_t height, std::int64_t width, float fill = 0);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 protected:
  // The canvas with `image` at (top, left), points moved with it.
  Array paste(const Array& image, std::int64_t top, std::int64_t left, Array& points, const char* who) const;
  std::int64_t height_, width_;
  float fill_;
};

// tensorpack's RandomPaste: the same at a uniformly random place, the canvas larger than
// the image in both extents (top from [0, height - H), left from [0, width - W)).
class RandomPaste : public CenterPaste {
 public:
  using CenterPaste::CenterPaste;
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;
};

}  // namespace vkp::dataflow
