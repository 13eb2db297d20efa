#include "dataflow/image_transform.h"

#include <utility>

#include "core/error.h"
#include "core/rng.h"

namespace vkp::dataflow {
namespace {

void require_size(const Array& image, std::int64_t height, std::int64_t width, const char* who) {
  const ImageDims d = image_dims(image, who);
  if (d.height != height || d.width != width)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": made for " + std::to_string(height) + " x " +
                                                 std::to_string(width) + " images, given " + describe(image));
}

void require_positive(std::int64_t height, std::int64_t width, const char* who) {
  require(height > 0 && width > 0, ErrorCode::invalid_argument,
          std::string(who) + ": sizes must be positive, got " + std::to_string(height) + " x " + std::to_string(width));
}

}  // namespace

ResizeTransform::ResizeTransform(std::int64_t height, std::int64_t width, std::int64_t new_height,
                                 std::int64_t new_width)
    : height_(height), width_(width), new_height_(new_height), new_width_(new_width) {
  require_positive(height_, width_, "ResizeTransform");
  require_positive(new_height_, new_width_, "ResizeTransform");
}

Array ResizeTransform::apply_image(Array image) const {
  require_size(image, height_, width_, "ResizeTransform");
  Array no_points(DType::f32, Shape{0, 2});
  Rng unused(0);  // Resize draws nothing
  return Resize(new_height_, new_width_).apply_with_points(std::move(image), no_points, unused);
}

void ResizeTransform::apply_points(Array& points) const {
  move_points(points, resize_map(height_, width_, new_height_, new_width_), "ResizeTransform");
}

CropTransform::CropTransform(std::int64_t top, std::int64_t left, std::int64_t height, std::int64_t width)
    : top_(top), left_(left), height_(height), width_(width) {
  require_positive(height_, width_, "CropTransform");
  require(top_ >= 0 && left_ >= 0, ErrorCode::invalid_argument,
          "CropTransform: the window's corner must not be negative, got (" + std::to_string(top_) + ", " +
              std::to_string(left_) + ")");
}

Array CropTransform::apply_image(Array image) const {
  const ImageDims d = image_dims(image, "CropTransform");
  if (top_ > d.height - height_ || left_ > d.width - width_)  // no sum to overflow
    throw Error(ErrorCode::invalid_argument, "CropTransform: the window of " + std::to_string(height_) + " x " +
                                                 std::to_string(width_) + " at (" + std::to_string(top_) + ", " +
                                                 std::to_string(left_) + ") does not lie inside " + describe(image));
  return crop_image(image, top_, left_, height_, width_);
}

void CropTransform::apply_points(Array& points) const {
  move_points(points, {1, 0, -static_cast<double>(left_), 0, 1, -static_cast<double>(top_)}, "CropTransform");
}

FlipTransform::FlipTransform(std::int64_t height, std::int64_t width, FlipAxis axis)
    : height_(height), width_(width), axis_(axis) {
  require_positive(height_, width_, "FlipTransform");
}

Array FlipTransform::apply_image(Array image) const {
  require_size(image, height_, width_, "FlipTransform");
  Array no_points(DType::f32, Shape{0, 2});
  Rng unused(0);  // with probability 1 the draw decides nothing
  return Flip(axis_, 1.0).apply_with_points(std::move(image), no_points, unused);
}

void FlipTransform::apply_points(Array& points) const {
  const auto last_x = static_cast<double>(width_ - 1), last_y = static_cast<double>(height_ - 1);
  move_points(points,
              axis_ == FlipAxis::horizontal ? PointMap{-1, 0, last_x, 0, 1, 0} : PointMap{1, 0, 0, 0, -1, last_y},
              "FlipTransform");
}

TransformList::TransformList(std::vector<TransformPtr> transforms) : transforms_(std::move(transforms)) {
  for (const TransformPtr& t : transforms_)
    require(t != nullptr, ErrorCode::invalid_argument, "TransformList: a transform is null");
}

Array TransformList::apply_image(Array image) const {
  for (const TransformPtr& t : transforms_) image = t->apply_image(std::move(image));
  return image;
}

void TransformList::apply_points(Array& points) const {
  for (const TransformPtr& t : transforms_) t->apply_points(points);
}

TransformFactory::TransformFactory(std::string name, std::function<Array(Array)> image,
                                   std::function<void(Array&)> points)
    : name_(std::move(name)), image_(std::move(image)), points_(std::move(points)) {
  require(static_cast<bool>(image_), ErrorCode::invalid_argument,
          "TransformFactory '" + name_ + "': the image function is empty");
}

Array TransformFactory::apply_image(Array image) const { return image_(std::move(image)); }

void TransformFactory::apply_points(Array& points) const {
  if (!points_)
    throw Error(ErrorCode::unsupported, "TransformFactory '" + name_ + "' was made without a function for points");
  points_(points);
}

}  // namespace vkp::dataflow
