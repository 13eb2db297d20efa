// ImageAugmentor: a (usually random) transformation of one image.
//
// Images are Arrays of shape [H, W, C] (HWC) or [H, W]; an augmentor keeps the rank.
// Augmentors run once per image, with typed loops inside: no per-pixel virtual calls.
// apply() is const and draws its randomness only from the Rng it is given, so one
// augmentor can serve several threads, and the same Rng state gives the same result.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vkpack/core/array.h"
#include "vkpack/core/rng.h"

namespace vkp::dataflow {

class ImageAugmentor {
 public:
  virtual ~ImageAugmentor() = default;
  // Takes the image by value so that in-place augmentors reuse its bytes.
  virtual Array apply(Array image, Rng& rng) const = 0;
};

using AugmentorPtr = std::shared_ptr<const ImageAugmentor>;

// The extents of an image: C is 1 for a rank-2 image.
struct ImageDims {
  std::int64_t height = 0, width = 0, channels = 0;
  int rank = 3;

  // A shape of this rank with other height and width.
  Shape with_size(std::int64_t h, std::int64_t w) const;
};

// Error(invalid_argument) naming `who` unless `image` is [H, W] or [H, W, C].
ImageDims image_dims(const Array& image, const char* who);
// Error(invalid_argument) naming `who` unless `image` is u8 or f32.
void require_u8_or_f32(const Array& image, const char* who);

}  // namespace vkp::dataflow
