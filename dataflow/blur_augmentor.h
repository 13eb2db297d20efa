// tensorpack's GaussianBlur, and the blur it draws.
#pragma once

#include <vector>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// The normalized 1-D Gaussian kernel of odd size `size` that OpenCV's GaussianBlur uses
// when sigma is 0: for sizes up to 7 its fixed binomial-like tables ({1}, {1, 2, 1} / 4,
// {1, 4, 6, 4, 1} / 16, {1, 7, 22, 36, 22, 7, 1} / 96... as OpenCV lists them), beyond
// that exp(-x^2 / (2 sigma^2)) with sigma = 0.3 ((size - 1) / 2 - 1) + 0.8, summed to 1.
std::vector<double> gaussian_kernel(int size);

// The image convolved with gaussian_kernel(kx) along its rows and gaussian_kernel(ky)
// along its columns, each channel alone, the border replicated (OpenCV's
// BORDER_REPLICATE); sums in double, u8 results rounded. u8 or f32 images.
Array gaussian_blur(const Array& image, int kx, int ky);

// tensorpack's GaussianBlur(max_size): kernel sizes 2 a + 1 and 2 b + 1, a and b drawn
// independently from [0, max_size) (3: sizes 1, 3 and 5; 1 never blurs).
class GaussianBlur : public ValueAugmentor {
 public:
  explicit GaussianBlur(int max_size = 3);
  Array apply(Array image, Rng& rng) const override;

 private:
  int max_size_;
};

}  // namespace vkp::dataflow
