// ImageTransform: one fixed change of an image and of points on it (tensorpack's
// imgaug.Transform). Where an augmentor draws its change anew for each image, a
// transform is the change itself, made once and applied to as many images and point
// sets as need the same one: an image and its mask, boxes, keypoints. Transforms are
// const and hold no randomness, so one may serve several threads.
// Points are f32 [N, 2] rows of (x, y) in the pixel grid (the centre of the pixel at
// row r and column c is (c, r), as ImageAugmentor::apply_with_points).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "core/array.h"
#include "dataflow/geometric_augmentors.h"

namespace vkp::dataflow {

class ImageTransform {
 public:
  virtual ~ImageTransform() = default;
  virtual Array apply_image(Array image) const = 0;
  // Moves each point to where the spot under it lands in apply_image's result.
  virtual void apply_points(Array& points) const = 0;
};
using TransformPtr = std::shared_ptr<const ImageTransform>;

// Bilinear resize of an height x width image to new_height x new_width (as Resize);
// an image of another size is refused, naming both.
class ResizeTransform : public ImageTransform {
 public:
  ResizeTransform(std::int64_t height, std::int64_t width, std::int64_t new_height, std::int64_t new_width);
  Array apply_image(Array image) const override;
  void apply_points(Array& points) const override;

 private:
  std::int64_t height_, width_, new_height_, new_width_;
};

// The window [top, top + height) x [left, left + width); it must lie inside the image.
class CropTransform : public ImageTransform {
 public:
  CropTransform(std::int64_t top, std::int64_t left, std::int64_t height, std::int64_t width);
  Array apply_image(Array image) const override;
  void apply_points(Array& points) const override;

 private:
  std::int64_t top_, left_, height_, width_;
};

// A mirror image of an height x width image (left-right for horizontal); another size
// is refused. Points: x -> width - 1 - x (or y -> height - 1 - y).
class FlipTransform : public ImageTransform {
 public:
  FlipTransform(std::int64_t height, std::int64_t width, FlipAxis axis = FlipAxis::horizontal);
  Array apply_image(Array image) const override;
  void apply_points(Array& points) const override;

 private:
  std::int64_t height_, width_;
  FlipAxis axis_;
};

// The transforms in order.
class TransformList : public ImageTransform {
 public:
  explicit TransformList(std::vector<TransformPtr> transforms);
  Array apply_image(Array image) const override;
  void apply_points(Array& points) const override;

 private:
  std::vector<TransformPtr> transforms_;
};

// A transform from two functions (tensorpack's TransformFactory): `image` changes the
// image, `points` moves the points; without `points`, apply_points is
// Error(unsupported) naming the transform.
class TransformFactory : public ImageTransform {
 public:
  TransformFactory(std::string name, std::function<Array(Array)> image, std::function<void(Array&)> points = {});
  Array apply_image(Array image) const override;
  void apply_points(Array& points) const override;

 private:
  std::string name_;
  std::function<Array(Array)> image_;
  std::function<void(Array&)> points_;
};

}  // namespace vkp::dataflow
