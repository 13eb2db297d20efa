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

}  // namespace vkp::dataflow
