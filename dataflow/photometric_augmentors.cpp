#include "dataflow/photometric_augmentors.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

namespace vkp::dataflow {
namespace {

std::uint8_t to_u8(float v) { return static_cast<std::uint8_t>(std::clamp(v + 0.5f, 0.0f, 255.0f)); }

// Applies f(value, element index) to every element, in place, for u8 or f32 images.
template <class F>
void transform(Array& image, F&& f) {
  if (image.dtype() == DType::u8) {
    std::span<std::uint8_t> p = image.data<std::uint8_t>();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = to_u8(f(static_cast<float>(p[i]), i));
  } else {
    std::span<float> p = image.data<float>();
    for (std::size_t i = 0; i < p.size(); ++i) p[i] = f(p[i], i);
  }
}

// Per-channel means (in double) of a u8 or f32 image with `c` channels.
std::vector<double> channel_means(const Array& image, std::int64_t c) {
  std::vector<double> sum(static_cast<std::size_t>(c), 0.0);
  const std::int64_t n = image.numel();
  if (image.dtype() == DType::u8) {
    std::span<const std::uint8_t> p = image.data<std::uint8_t>();
    for (std::int64_t i = 0; i < n; ++i) sum[static_cast<std::size_t>(i % c)] += p[static_cast<std::size_t>(i)];
  } else {
    std::span<const float> p = image.data<float>();
    for (std::int64_t i = 0; i < n; ++i) sum[static_cast<std::size_t>(i % c)] += p[static_cast<std::size_t>(i)];
  }
  const double per_channel = n > 0 ? static_cast<double>(n / c) : 1.0;
  for (double& s : sum) s /= per_channel;
  return sum;
}

std::vector<float> to_f32_values(const Array& image) {
  std::vector<float> v(static_cast<std::size_t>(image.numel()));
  if (image.dtype() == DType::u8)
    std::copy(image.data<std::uint8_t>().begin(), image.data<std::uint8_t>().end(), v.begin());
  else
    std::copy(image.data<float>().begin(), image.data<float>().end(), v.begin());
  return v;
}

// One value per channel from `values` (empty: `fallback`; one value: for all channels).
std::vector<float> per_channel(const std::vector<float>& values, std::int64_t c, float fallback, const char* what) {
  if (values.empty()) return std::vector<float>(static_cast<std::size_t>(c), fallback);
  if (values.size() == 1) return std::vector<float>(static_cast<std::size_t>(c), values[0]);
  if (values.size() != static_cast<std::size_t>(c))
    throw Error(ErrorCode::invalid_argument, std::string("ToFloat: ") + what + " has " +
                                                 std::to_string(values.size()) + " values, the image has " +
                                                 std::to_string(c) + " channels");
  return values;
}

}  // namespace

Brightness::Brightness(float delta) : delta_(delta) {
  require(delta_ >= 0, ErrorCode::invalid_argument, "Brightness: delta must be >= 0, got " + std::to_string(delta_));
}

Array Brightness::apply(Array image, Rng& rng) const {
  image_dims(image, "Brightness");
  require_u8_or_f32(image, "Brightness");
  const float d = rng.uniform(-delta_, delta_);
  transform(image, [d](float v, std::size_t) { return v + d; });
  return image;
}

Contrast::Contrast(float low, float high) : low_(low), high_(high) {
  require(low_ >= 0 && low_ <= high_, ErrorCode::invalid_argument,
          "Contrast: needs 0 <= low <= high, got [" + std::to_string(low_) + ", " + std::to_string(high_) + ")");
}

Array Contrast::apply(Array image, Rng& rng) const {
  const ImageDims d = image_dims(image, "Contrast");
  require_u8_or_f32(image, "Contrast");
  const float factor = rng.uniform(low_, high_);
  const std::size_t c = static_cast<std::size_t>(d.channels);
  std::vector<float> mean;
  for (double m : channel_means(image, d.channels)) mean.push_back(static_cast<float>(m));
  transform(image, [&](float v, std::size_t i) { return (v - mean[i % c]) * factor + mean[i % c]; });
  return image;
}

MeanVarianceNormalize::MeanVarianceNormalize(bool all_channels) : all_channels_(all_channels) {}

Array MeanVarianceNormalize::apply(Array image, Rng&) const {
  const ImageDims d = image_dims(image, "MeanVarianceNormalize");
  require_u8_or_f32(image, "MeanVarianceNormalize");
  const std::int64_t c = all_channels_ ? 1 : d.channels;
  std::vector<float> v = to_f32_values(image);
  const std::vector<double> mean = channel_means(image, c);
  std::vector<double> var(static_cast<std::size_t>(c), 0.0);
  for (std::size_t i = 0; i < v.size(); ++i) {
    const double e = v[i] - mean[i % static_cast<std::size_t>(c)];
    var[i % static_cast<std::size_t>(c)] += e * e;
  }
  const double per_channel = static_cast<double>(std::max<std::size_t>(v.size() / static_cast<std::size_t>(c), 1));
  const double floor = 1.0 / std::sqrt(static_cast<double>(std::max<std::size_t>(v.size(), 1)));
  std::vector<float> scale, shift;
  for (std::size_t k = 0; k < static_cast<std::size_t>(c); ++k) {
    const double stddev = std::max(std::sqrt(var[k] / per_channel), floor);
    scale.push_back(static_cast<float>(1.0 / stddev));
    shift.push_back(static_cast<float>(mean[k]));
  }
  Array out = Array::uninitialized(DType::f32, image.shape());
  std::span<float> o = out.data<float>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const std::size_t k = i % static_cast<std::size_t>(c);
    o[i] = (v[i] - shift[k]) * scale[k];
  }
  return out;
}

GaussianNoise::GaussianNoise(float sigma) : sigma_(sigma) {
  require(sigma_ >= 0, ErrorCode::invalid_argument, "GaussianNoise: sigma must be >= 0, got " + std::to_string(sigma_));
}

Array GaussianNoise::apply(Array image, Rng& rng) const {
  image_dims(image, "GaussianNoise");
  require_u8_or_f32(image, "GaussianNoise");
  transform(image, [&](float v, std::size_t) { return v + sigma_ * rng.normal(); });
  return image;
}

ToFloat::ToFloat(float scale, std::vector<float> mean, std::vector<float> std)
    : scale_(scale), mean_(std::move(mean)), std_(std::move(std)) {
  for (float s : std_)
    require(s != 0 && std::isfinite(s), ErrorCode::invalid_argument,
            "ToFloat: every std must be finite and non-zero, got " + std::to_string(s));
  if (mean_.size() <= 1 && std_.size() <= 1) uniform_ = affine(1);
}

ToFloat::Affine ToFloat::affine(std::int64_t channels) const {
  const std::vector<float> mean = per_channel(mean_, channels, 0.0f, "mean");
  const std::vector<float> stddev = per_channel(std_, channels, 1.0f, "std");
  Affine f;
  for (std::size_t k = 0; k < mean.size(); ++k) {
    f.a.push_back(scale_ / stddev[k]);
    f.b.push_back(-mean[k] / stddev[k]);
  }
  return f;
}

Array ToFloat::apply(Array image, Rng&) const {
  const ImageDims d = image_dims(image, "ToFloat");
  require_u8_or_f32(image, "ToFloat");
  // The same coefficients for every channel need no per-call vectors.
  const Affine per_call = uniform_ ? Affine{} : affine(d.channels);
  const Affine& f = uniform_ ? *uniform_ : per_call;
  const std::size_t n = static_cast<std::size_t>(image.numel()), c = f.a.size();
  const float a0 = f.a[0], b0 = f.b[0];
  if (image.dtype() == DType::f32) {  // in place
    float* p = image.data<float>().data();
    if (c == 1)
      for (std::size_t i = 0; i < n; ++i) p[i] = p[i] * a0 + b0;
    else
      for (std::size_t i = 0; i < n; ++i) p[i] = p[i] * f.a[i % c] + f.b[i % c];
    return image;
  }
  Array out = Array::uninitialized(DType::f32, image.shape());
  float* o = out.data<float>().data();
  const std::uint8_t* p = image.data<std::uint8_t>().data();
  if (c == 1)
    for (std::size_t i = 0; i < n; ++i) o[i] = static_cast<float>(p[i]) * a0 + b0;
  else
    for (std::size_t i = 0; i < n; ++i) o[i] = static_cast<float>(p[i]) * f.a[i % c] + f.b[i % c];
  return out;
}

BrightnessScale::BrightnessScale(float low, float high) : low_(low), high_(high) {
  require(low_ <= high_, ErrorCode::invalid_argument,
          "BrightnessScale: needs low <= high, got [" + std::to_string(low_) + ", " + std::to_string(high_) + ")");
}

Array BrightnessScale::apply(Array image, Rng& rng) const {
  image_dims(image, "BrightnessScale");
  require_u8_or_f32(image, "BrightnessScale");
  const float factor = rng.uniform(low_, high_);
  transform(image, [factor](float v, std::size_t) { return v * factor; });
  return image;
}

Gamma::Gamma(float low, float high) : low_(low), high_(high) {
  require(low_ > -1.0f && low_ <= high_, ErrorCode::invalid_argument,
          "Gamma: needs -1 < low <= high, got [" + std::to_string(low_) + ", " + std::to_string(high_) + ")");
}

Array Gamma::apply(Array image, Rng& rng) const {
  image_dims(image, "Gamma");
  require_u8_or_f32(image, "Gamma");
  const float exponent = 1.0f / (1.0f + rng.uniform(low_, high_));
  transform(image, [exponent](float v, std::size_t) {
    return 255.0f * std::pow(std::clamp(v, 0.0f, 255.0f) / 255.0f, exponent);
  });
  return image;
}

Clip::Clip(float low, float high) : low_(low), high_(high) {
  require(low_ <= high_, ErrorCode::invalid_argument,
          "Clip: needs low <= high, got [" + std::to_string(low_) + ", " + std::to_string(high_) + "]");
}

Array Clip::apply(Array image, Rng&) const {
  image_dims(image, "Clip");
  require_u8_or_f32(image, "Clip");
  transform(image, [this](float v, std::size_t) { return std::clamp(v, low_, high_); });
  return image;
}

MinMaxNormalize::MinMaxNormalize(float low, float high, bool all_channels)
    : low_(low), high_(high), all_channels_(all_channels) {
  require(low_ <= high_, ErrorCode::invalid_argument,
          "MinMaxNormalize: needs low <= high, got [" + std::to_string(low_) + ", " + std::to_string(high_) + "]");
}

Array MinMaxNormalize::apply(Array image, Rng&) const {
  const ImageDims d = image_dims(image, "MinMaxNormalize");
  require_u8_or_f32(image, "MinMaxNormalize");
  const std::vector<float> v = to_f32_values(image);
  const std::size_t groups = all_channels_ ? 1 : static_cast<std::size_t>(d.channels);
  std::vector<float> lo(groups, std::numeric_limits<float>::infinity()), hi(groups, -std::numeric_limits<float>::infinity());
  for (std::size_t i = 0; i < v.size(); ++i) {
    lo[i % groups] = std::min(lo[i % groups], v[i]);
    hi[i % groups] = std::max(hi[i % groups], v[i]);
  }
  Array out(DType::f32, image.shape());
  std::span<float> o = out.data<float>();
  for (std::size_t i = 0; i < v.size(); ++i) {
    const float range = hi[i % groups] - lo[i % groups];
    o[i] = range > 0 ? (v[i] - lo[i % groups]) * ((high_ - low_) / range) + low_ : low_;
  }
  return out;
}

SaltPepperNoise::SaltPepperNoise(float white_prob, float black_prob) : white_(white_prob), black_(black_prob) {
  require(white_ >= 0 && black_ >= 0 && white_ + black_ <= 1, ErrorCode::invalid_argument,
          "SaltPepperNoise: needs probabilities >= 0 that add up to at most 1, got " + std::to_string(white_) +
              " and " + std::to_string(black_));
}

Array SaltPepperNoise::apply(Array image, Rng& rng) const {
  image_dims(image, "SaltPepperNoise");
  require_u8_or_f32(image, "SaltPepperNoise");
  transform(image, [&](float v, std::size_t) {
    const float r = rng.uniform();
    return r < black_ ? 0.0f : r >= 1.0f - white_ ? 255.0f : v;
  });
  return image;
}

Grayscale::Grayscale(bool keep_shape, bool rgb) : keep_shape_(keep_shape), rgb_(rgb) {}

Array Grayscale::apply(Array image, Rng&) const {
  const ImageDims d = image_dims(image, "Grayscale");
  require_u8_or_f32(image, "Grayscale");
  require(d.rank == 3 && d.channels == 3, ErrorCode::invalid_argument,
          "Grayscale: takes [H, W, 3] images, not " + describe(image));
  const std::vector<float> v = to_f32_values(image);
  const float wr = 0.299f, wg = 0.587f, wb = 0.114f;
  const std::int64_t out_c = keep_shape_ ? 3 : 1;
  Array out(image.dtype(), Shape{d.height, d.width, out_c});
  for (std::size_t p = 0; p < v.size() / 3; ++p) {
    const float first = v[3 * p], second = v[3 * p + 1], third = v[3 * p + 2];
    const float grey = rgb_ ? wr * first + wg * second + wb * third : wb * first + wg * second + wr * third;
    for (std::int64_t k = 0; k < out_c; ++k) {
      const std::size_t at = p * static_cast<std::size_t>(out_c) + static_cast<std::size_t>(k);
      if (out.dtype() == DType::u8) out.data<std::uint8_t>()[at] = to_u8(grey);
      else out.data<float>()[at] = grey;
    }
  }
  return out;
}

Array ToUint8::apply(Array image, Rng&) const {
  image_dims(image, "ToUint8");
  require_u8_or_f32(image, "ToUint8");
  if (image.dtype() == DType::u8) return image;
  Array out(DType::u8, image.shape());
  std::span<const float> in = image.data<float>();
  std::span<std::uint8_t> o = out.data<std::uint8_t>();
  for (std::size_t i = 0; i < in.size(); ++i) o[i] = to_u8(std::isnan(in[i]) ? 0.0f : in[i]);
  return out;
}

}  // namespace vkp::dataflow
