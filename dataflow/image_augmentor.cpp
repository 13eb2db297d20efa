#include "dataflow/image_augmentor.h"

#include <cmath>
#include <span>
#include <string>

namespace vkp::dataflow {

Array ImageAugmentor::apply_with_points(Array, Array&, Rng&) const {
  throw Error(ErrorCode::unsupported,
              "this augmentor cannot move points with the image: it neither overrides apply_with_points nor derives "
              "from ValueAugmentor");
}

Array ValueAugmentor::apply_with_points(Array image, Array& points, Rng& rng) const {
  move_points(points, {1, 0, 0, 0, 1, 0}, "augmented points");  // checks them, moves nothing
  return apply(std::move(image), rng);
}

Array PointAugmentor::apply(Array image, Rng& rng) const {
  Array none(DType::f32, Shape{0, 2});
  return apply_with_points(std::move(image), none, rng);
}

void move_points(Array& points, const PointMap& m, const char* who) {
  const Shape& s = points.shape();
  if (points.dtype() != DType::f32 || s.rank() != 2 || s[1] != 2)
    throw Error(ErrorCode::invalid_argument,
                std::string(who) + ": points must be f32 [N, 2] rows of (x, y), got " + describe(points));
  const std::span<float> p = points.data<float>();
  for (std::size_t i = 0; i + 1 < p.size(); i += 2) {
    const double x = p[i], y = p[i + 1];
    p[i] = static_cast<float>(m[0] * x + m[1] * y + m[2]);
    p[i + 1] = static_cast<float>(m[3] * x + m[4] * y + m[5]);
  }
}

PointMap inverse(const PointMap& m) {
  const double det = m[0] * m[4] - m[1] * m[3];
  require(det != 0 && std::isfinite(det), ErrorCode::invalid_argument, "inverse: the affine map is singular");
  const double i0 = m[4] / det, i1 = -m[1] / det, i3 = -m[3] / det, i4 = m[0] / det;
  return {i0, i1, -(i0 * m[2] + i1 * m[5]), i3, i4, -(i3 * m[2] + i4 * m[5])};
}

Shape ImageDims::with_size(std::int64_t h, std::int64_t w) const {
  return rank == 2 ? Shape{h, w} : Shape{h, w, channels};
}

ImageDims image_dims(const Array& image, const char* who) {
  const Shape& s = image.shape();
  if (s.rank() != 2 && s.rank() != 3)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": expects an image [H, W, C] or [H, W], got " +
                                                 describe(image));
  return ImageDims{s[0], s[1], s.rank() == 3 ? s[2] : 1, s.rank()};
}

void require_u8_or_f32(const Array& image, const char* who) {
  if (image.dtype() != DType::u8 && image.dtype() != DType::f32)
    throw Error(ErrorCode::invalid_argument,
                std::string(who) + ": works on u8 or f32 images, got " + describe(image));
}

}  // namespace vkp::dataflow
