// Augmentors that warp or cut an image (tensorpack's imgaug): affine warps with border
// modes, rotation, resizing the shortest edge, GoogLeNet's random-area crop, cutout.
// Warps sample bilinearly with OpenCV's pixel convention (pixel centres at integer
// coordinates) and work on u8 (rounded) and f32 images of any channel count.
#pragma once

#include <array>
#include <vector>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// What a warp reads outside the image: `fill` (constant), the nearest edge pixel
// (replicate), or the image mirrored about its edge pixel (reflect: dcb|abcd|cba, as
// OpenCV's BORDER_REFLECT_101).
enum class Border { constant, replicate, reflect };

// out(y, x) = image at (u, v) = (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]) (the
// inverse map, from output to input coordinates), out_height x out_width.
Array warp_affine(const Array& image, const std::array<double, 6>& m, std::int64_t out_height,
                  std::int64_t out_width, Border border = Border::constant, float fill = 0);

// Rotation about the centre by an angle uniform in [-max_deg, max_deg] (counter-
// clockwise for positive angles on a y-down image), same size.
class Rotation : public PointAugmentor {
 public:
  explicit Rotation(double max_deg, Border border = Border::constant, float fill = 0);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  double max_deg_;
  Border border_;
  float fill_;
};

// tensorpack's RotationAndCropValid: Rotation's turn (constant border of 0) by an angle
// uniform in [-max_deg, max_deg] (with step_deg: rounded down to a multiple of it, as
// tensorpack, which then asks max_deg 180, a multiple of step_deg), then the largest
// upright rectangle inside the turned image (largest_rotated_rect), centred: the output's
// size varies with the angle.
class RotationAndCropValid : public PointAugmentor {
 public:
  explicit RotationAndCropValid(double max_deg, double step_deg = 0);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  double max_deg_, step_deg_;
};

// The (width, height) of the largest axis-aligned rectangle inside a w x h rectangle
// turned by `deg` degrees, rounded half to even (tensorpack's largest_rotated_rect).
std::array<std::int64_t, 2> largest_rotated_rect(std::int64_t w, std::int64_t h, double deg);

// tensorpack's Affine: about the centre, a scale uniform in [scale_min, scale_max], a
// rotation uniform in [-rotate_max_deg, rotate_max_deg], a horizontal shear uniform in
// [-shear_max_deg, shear_max_deg], then a shift uniform in [-translate_frac, translate_frac]
// times the width (and the height); same size. The defaults change nothing.
struct AffineOptions {
  double scale_min = 1, scale_max = 1;
  double translate_frac = 0;
  double rotate_max_deg = 0;
  double shear_max_deg = 0;
  Border border = Border::constant;
  float fill = 0;  // what Border::constant fills with
};

class Affine : public PointAugmentor {
 public:
  // Error(invalid_argument) unless 0 < scale_min <= scale_max.
  explicit Affine(const AffineOptions& options);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  AffineOptions o_;
};

// Bilinear resize so that the shorter edge is `size`, keeping the aspect ratio (the
// longer edge rounded).
class ResizeShortestEdge : public PointAugmentor {
 public:
  explicit ResizeShortestEdge(std::int64_t size);
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t size_;
};

// GoogLeNet's (Inception's) crop: up to 10 tries at a window of area uniform in
// [0.08, 1] of the image and aspect ratio log-uniform in [3/4, 4/3] that fits, then
// resized to height x width; when none fits, the centre crop of the shorter edge, resized.
class GoogleNetRandomCropAndResize : public PointAugmentor {
 public:
  GoogleNetRandomCropAndResize(std::int64_t height, std::int64_t width, std::array<double, 2> area = {0.08, 1.0},
                               std::array<double, 2> aspect = {0.75, 4.0 / 3.0});
  Array apply_with_points(Array image, Array& points, Rng& rng) const override;

 private:
  std::int64_t height_, width_;
  std::array<double, 2> area_, aspect_;
};

// tensorpack's GaussianDeform: a smooth random displacement of an image of `height` x
// `width`. Anchor k at (y, x) in [0, 1] (fractions of the height and width) moves by
// v_k = (dy, dx), each drawn uniformly from [-randrange, randrange) (dy first, anchor by
// anchor; randrange < 0: height / 8, tensorpack's default); pixel (y, x) reads the image at
// (y, x) + sum_k g_k(y, x) v_k with g_k = exp(-((y / H - a_y)^2 + (x / W - a_x)^2) / sigma),
// clamped into the image, bilinearly. The weights are computed once. Points are refused
// (the map has no closed inverse; tensorpack's refuses too).
class GaussianDeform : public ImageAugmentor {
 public:
  GaussianDeform(std::vector<std::array<double, 2>> anchors, std::int64_t height, std::int64_t width,
                 double sigma = 0.5, double randrange = -1);
  Array apply(Array image, Rng& rng) const override;

 private:
  std::size_t anchors_;
  std::int64_t height_, width_;
  double randrange_;
  std::vector<float> weights_;  // [H, W, K]
};

// Cutout: a rectangle of height uniform in h_range and width uniform in w_range (pixels,
// inclusive; tensorpack's h_range and w_range), at a uniform position (it may cross the
// border), set to `fill`. The first form draws both sides from [min_size, max_size].
class RandomCutout : public ValueAugmentor {
 public:
  RandomCutout(std::int64_t min_size, std::int64_t max_size, float fill = 0);
  RandomCutout(std::array<std::int64_t, 2> h_range, std::array<std::int64_t, 2> w_range, float fill = 0);
  Array apply(Array image, Rng& rng) const override;

 private:
  std::array<std::int64_t, 2> h_range_, w_range_;
  float fill_;
};

}  // namespace vkp::dataflow
