// Augmentors that move pixels: flips, crops, the pad-and-crop shift, resizing.
// Flips, crops and shifts work on images of any dtype; Resize on u8 and f32.
#pragma once

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

enum class FlipAxis { horizontal, vertical };

// Mirrors the image (left-right for horizontal) with probability `prob`, in place.
class Flip : public PointAugmentor {
 public:
  explicit Flip(FlipAxis axis, double prob = 0.5);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  FlipAxis axis_;
  double prob_;
};

// tensorpack's Transpose: with probability `prob`, the image's rows become its columns
// ([H, W, C] -> [W, H, C]); points (x, y) become (y, x).
class Transpose : public PointAugmentor {
 public:
  explicit Transpose(double prob = 0.5);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  double prob_;
};

// A height x width window at a uniformly random position.
class RandomCrop : public PointAugmentor {
 public:
  RandomCrop(std::int64_t height, std::int64_t width);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t height_, width_;
};

// The height x width window at the centre (rounding towards the top left).
class CenterCrop : public PointAugmentor {
 public:
  CenterCrop(std::int64_t height, std::int64_t width);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t height_, width_;
};

// Random translation by pad-and-crop: the image padded by `pad` pixels of value `fill`
// on every side, then a height x width window at a uniformly random position (the usual
// CIFAR augmentation is Shift(4, 32, 32)). The padded image is never built.
class Shift : public PointAugmentor {
 public:
  Shift(std::int64_t pad, std::int64_t height, std::int64_t width, float fill = 0);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t pad_, height_, width_;
  float fill_;
};

// Bilinear resize to height x width, sampling at pixel centres (as OpenCV's INTER_LINEAR
// and PyTorch's align_corners=false). u8 results are rounded.
class Resize : public PointAugmentor {
 public:
  Resize(std::int64_t height, std::int64_t width);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t height_, width_;
};

// Where point (x, y) of an in_h x in_w image lands when it is resized to out_h x out_w
// (as Resize samples: pixel centres keep their relative place).
PointMap resize_map(std::int64_t in_h, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w);

// The window [top, top + height) x [left, left + width) of `image`; it must lie inside.
Array crop_image(const Array& image, std::int64_t top, std::int64_t left, std::int64_t height, std::int64_t width);

}  // namespace vkp::dataflow
