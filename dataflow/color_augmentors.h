// Augmentors of colour (tensorpack's imgaug Hue, Saturation, Lighting, ColorSpace). They
// take RGB images [H, W, 3], u8 (rounded, clamped to [0, 255]) or f32 (not clamped).
#pragma once

#include <array>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// Rotates every pixel's hue by one angle uniform in [-max_deg, max_deg] degrees, keeping
// its saturation and value (HSV).
class Hue : public ValueAugmentor {
 public:
  explicit Hue(float max_deg);
  Array apply(Array image, Rng& rng) const override;

 private:
  float max_deg_;
};

// Blends every pixel with its grey (0.299 R + 0.587 G + 0.114 B): out = x v + grey (1 - v),
// v uniform in [1 - alpha, 1 + alpha].
class Saturation : public ValueAugmentor {
 public:
  explicit Saturation(float alpha);
  Array apply(Array image, Rng& rng) const override;

 private:
  float alpha_;
};

// AlexNet's PCA lighting noise: out_c = x_c + sum_i eigvec[c][i] * alpha_i * eigval[i],
// alpha_i normal with standard deviation `std` (eigen-decomposition of the data set's RGB
// covariance, in the images' scale).
class Lighting : public ValueAugmentor {
 public:
  Lighting(float std, std::array<float, 3> eigval, std::array<std::array<float, 3>, 3> eigvec);
  Array apply(Array image, Rng& rng) const override;

 private:
  float std_;
  std::array<float, 3> eigval_;
  std::array<std::array<float, 3>, 3> eigvec_;
};

// The conversions of ColorSpace. HSV as OpenCV stores it: in u8 images H is degrees / 2
// (0-179), S and V 0-255; in f32 images H is degrees (0-360), S 0-1 and V in the scale
// of the RGB values. Grey is 0.299 R + 0.587 G + 0.114 B (as Grayscale).
enum class ColorConversion {
  rgb_to_bgr,
  bgr_to_rgb,
  rgb_to_hsv,
  bgr_to_hsv,
  hsv_to_rgb,
  hsv_to_bgr,
  rgb_to_gray,
  bgr_to_gray
};

// tensorpack's ColorSpace (cv2.cvtColor with one of the modes above): every image
// converted, nothing drawn. Grey images are [H, W], or [H, W, 1] with keepdims.
class ColorSpace : public ValueAugmentor {
 public:
  explicit ColorSpace(ColorConversion conversion, bool keepdims = false);
  Array apply(Array image, Rng& rng) const override;

 private:
  ColorConversion conversion_;
  bool keepdims_;
};

// One pixel's HSV (H in degrees, S 0-1, V in the scale of RGB) and back.
std::array<float, 3> rgb_to_hsv(std::array<float, 3> rgb);
std::array<float, 3> hsv_to_rgb(std::array<float, 3> hsv);

// RGB with its hue rotated by `degrees` (what Hue applies), for any scale of values.
std::array<float, 3> rotate_hue(std::array<float, 3> rgb, float degrees);

}  // namespace vkp::dataflow
