// tensorpack's JpegNoise: the image through a JPEG encoder and decoder (stb's).
#pragma once

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// Encodes the image as JPEG at a quality drawn uniformly from [quality_low,
// quality_high) (tensorpack's randint) and decodes it again: blocking and ringing as in
// the photos a model will meet. u8 images [H, W], [H, W, 1] or [H, W, 3]; the shape is
// kept.
class JpegNoise : public ValueAugmentor {
 public:
  explicit JpegNoise(int quality_low = 40, int quality_high = 100);
  Array apply(Array image, Rng& rng) const override;

 private:
  int low_, high_;
};

}  // namespace vkp::dataflow
