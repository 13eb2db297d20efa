// Augmentors that change pixel values. They take u8 or f32 images; u8 results are
// rounded and clamped to [0, 255], f32 results are not clamped.
#pragma once

#include <optional>

#include "dataflow/image_augmentor.h"

namespace vkp::dataflow {

// Adds one value drawn uniformly from [-delta, delta) to every pixel.
class Brightness : public ValueAugmentor {
 public:
  explicit Brightness(float delta);
  Array apply(Array image, Rng& rng) const override;

 private:
  float delta_;
};

// Scales every channel's deviation from its mean by a factor drawn uniformly from
// [low, high): out = (x - mean_c) * factor + mean_c.
class Contrast : public ValueAugmentor {
 public:
  Contrast(float low, float high);
  Array apply(Array image, Rng& rng) const override;

 private:
  float low_, high_;
};

// out = (x - mean) / max(stddev, 1 / sqrt(numel)), over the whole image or per channel;
// the result is f32. Not random.
class MeanVarianceNormalize : public ValueAugmentor {
 public:
  explicit MeanVarianceNormalize(bool all_channels = true);
  Array apply(Array image, Rng& rng) const override;

 private:
  bool all_channels_;
};

// Adds independent normal noise of standard deviation `sigma` to every element.
class GaussianNoise : public ValueAugmentor {
 public:
  explicit GaussianNoise(float sigma);
  Array apply(Array image, Rng& rng) const override;

 private:
  float sigma_;
};

// To f32: out = (x * scale - mean_c) / std_c. `mean` and `std` have one value per
// channel, or one for all, or are empty (0 and 1). Not random. ToFloat() maps u8 to [0, 1].
class ToFloat : public ValueAugmentor {
 public:
  explicit ToFloat(float scale = 1.0f / 255.0f, std::vector<float> mean = {}, std::vector<float> std = {});
  Array apply(Array image, Rng& rng) const override;

 private:
  // out = x * a_c + b_c for each of `channels` channels.
  struct Affine {
    std::vector<float> a, b;
  };
  Affine affine(std::int64_t channels) const;

  float scale_;
  std::vector<float> mean_, std_;
  std::optional<Affine> uniform_;  // when mean and std hold at most one value each
};

// tensorpack's BrightnessScale: multiplies every pixel by one factor drawn uniformly from
// [low, high).
class BrightnessScale : public ValueAugmentor {
 public:
  BrightnessScale(float low, float high);
  Array apply(Array image, Rng& rng) const override;

 private:
  float low_, high_;
};

// tensorpack's Gamma: out = 255 (x / 255)^(1 / (1 + g)), g drawn uniformly from
// [low, high) (> -1), for images in [0, 255] (values outside are clamped first).
class Gamma : public ValueAugmentor {
 public:
  explicit Gamma(float low = -0.5f, float high = 0.5f);
  Array apply(Array image, Rng& rng) const override;

 private:
  float low_, high_;
};

// tensorpack's Clip: every value into [low, high]. Not random.
class Clip : public ValueAugmentor {
 public:
  explicit Clip(float low = 0.0f, float high = 255.0f);
  Array apply(Array image, Rng& rng) const override;

 private:
  float low_, high_;
};

// tensorpack's MinMaxNormalize: the image's (or each channel's) smallest value to `low`
// and largest to `high`, linearly; a constant image (or channel) becomes `low`. f32 out.
// Not random.
class MinMaxNormalize : public ValueAugmentor {
 public:
  explicit MinMaxNormalize(float low = 0.0f, float high = 255.0f, bool all_channels = true);
  Array apply(Array image, Rng& rng) const override;

 private:
  float low_, high_;
  bool all_channels_;
};

// tensorpack's SaltPepperNoise: each element independently becomes 255 with probability
// white_prob and 0 with probability black_prob (images in [0, 255]).
class SaltPepperNoise : public ValueAugmentor {
 public:
  explicit SaltPepperNoise(float white_prob = 0.05f, float black_prob = 0.05f);
  Array apply(Array image, Rng& rng) const override;

 private:
  float white_, black_;
};

// tensorpack's Grayscale: 0.299 R + 0.587 G + 0.114 B of an RGB image [H, W, 3] (stb
// decodes RGB; tensorpack's default is OpenCV's BGR, so rgb = false reads B, G, R), as
// [H, W, 1], or repeated into 3 channels with keep_shape. Not random.
class Grayscale : public ValueAugmentor {
 public:
  explicit Grayscale(bool keep_shape = false, bool rgb = true);
  Array apply(Array image, Rng& rng) const override;

 private:
  bool keep_shape_, rgb_;
};

// tensorpack's ToUint8: values clamped to [0, 255] and rounded to u8. Not random.
class ToUint8 : public ValueAugmentor {
 public:
  Array apply(Array image, Rng& rng) const override;
};

}  // namespace vkp::dataflow
