#include "dataflow/photometric_augmentors.h"

#include <algorithm>
#include <cmath>
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

}  // namespace vkp::dataflow
