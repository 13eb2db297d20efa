// tensorpack's GaussianBlur, and the blur it draws.
#pragma once

#include <array>
#include <vector>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// The normalized 1-D Gaussian kernel of odd size `size` that OpenCV's GaussianBlur uses:
// exp(-x^2 / (2 sigma^2)) summed to 1; with sigma <= 0 (OpenCV's default), for sizes up to
// 7 its fixed tables ({1}, {1, 2, 1} / 4, {1, 4, 6, 4, 1} / 16, {1, 3.5, 7, 9, 7, 3.5, 1} /
// 32), beyond that sigma = 0.3 ((size - 1) / 2 - 1) + 0.8.
std::vector<double> gaussian_kernel(int size, double sigma = 0);

// The image convolved with gaussian_kernel(kx, sigma_x) along its rows and
// gaussian_kernel(ky, sigma_y) along its columns, each channel alone, the border
// replicated (OpenCV's BORDER_REPLICATE); sums in double, u8 results rounded. u8 or f32.
Array gaussian_blur(const Array& image, int kx, int ky, double sigma_x = 0, double sigma_y = 0);

// tensorpack's GaussianBlur(size_range, sigma_range, symmetric): kernel sizes 2 s + 1 with
// s drawn from [size_range[0], size_range[1]) for x and for y, sigmas uniform in
// sigma_range (0: OpenCV's default for the size); with `symmetric` y takes x's draws
// (both are drawn either way, as tensorpack's). The default blurs with sizes 1, 3 or 5.
// GaussianBlur(max_size) is tensorpack's deprecated form: size_range (0, max_size).
class GaussianBlur : public ValueAugmentor {
 public:
  explicit GaussianBlur(std::array<int, 2> size_range = {0, 3}, std::array<double, 2> sigma_range = {0, 0},
                        bool symmetric = true);
  explicit GaussianBlur(int max_size) : GaussianBlur({0, max_size}) {}
  Array apply(Array image, Rng& rng) const override;

 private:
  std::array<int, 2> size_range_;
  std::array<double, 2> sigma_range_;
  bool symmetric_;
};

}  // namespace vkp::dataflow
