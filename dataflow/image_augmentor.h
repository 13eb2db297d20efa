// ImageAugmentor: a (usually random) transformation of one image.
//
// Images are Arrays of shape [H, W, C] (HWC) or [H, W]; an augmentor keeps the rank.
// Augmentors run once per image, with typed loops inside: no per-pixel virtual calls.
// apply() is const and draws its randomness only from the Rng it is given, so one
// augmentor can serve several threads, and the same Rng state gives the same result.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "core/array.h"
#include "core/rng.h"

namespace vkp::dataflow {

class ImageAugmentor {
 public:
  virtual ~ImageAugmentor() = default;
  // Takes the image by value so that in-place augmentors reuse its bytes.
  virtual Array apply(Array image, Rng& rng) const = 0;
  // apply(), with the same draws from `rng`, and the same move of points on the image:
  // `points` f32 [N, 2] of (x, y) in the image's pixel grid (the centre of the pixel at
  // row r and column c is (c, r), OpenCV's convention; points may lie outside), moved
  // to where that spot of the image lands (tensorpack's apply_coords). Augmentors that
  // move pixels override this; those that only change values derive from ValueAugmentor.
  // Others refuse: Error(unsupported).
  virtual Array apply_with_points(Array image, Array& points, Rng& rng) const;
};

// An augmentor that changes the values of pixels and never where they are (colour,
// noise, normalisation, cutout): points on the image stay where they are.
class ValueAugmentor : public ImageAugmentor {
 public:
  Array apply_with_points(Array image, Array& points, Rng& rng) const final;
};

// An augmentor that moves pixels (flips, crops, warps): it implements apply_with_points,
// and apply() is that with no points.
class PointAugmentor : public ImageAugmentor {
 public:
  Array apply(Array image, Rng& rng) const final;
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
// An affine map of image coordinates: (x, y) -> (m[0] x + m[1] y + m[2], m[3] x + m[4] y + m[5]).
using PointMap = std::array<double, 6>;
// Moves every row (x, y) of `points` f32 [N, 2] by `map`; Error(invalid_argument)
// naming `who` for another shape or dtype.
void move_points(Array& points, const PointMap& map, const char* who);
// The map that undoes `map` (which must be invertible).
PointMap inverse(const PointMap& map);

// Error(invalid_argument) naming `who` unless `image` is u8 or f32.
void require_u8_or_f32(const Array& image, const char* who);

}  // namespace vkp::dataflow
