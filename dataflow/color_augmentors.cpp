#include "dataflow/color_augmentors.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"
#include "dataflow/photometric_augmentors.h"

namespace vkp::dataflow {
namespace {

// fn(rgb) -> rgb on every pixel of an RGB image, in place.
template <class Fn>
Array each_pixel(Array image, const char* who, Fn&& fn) {
  const ImageDims d = image_dims(image, who);
  require_u8_or_f32(image, who);
  if (d.channels != 3)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": takes RGB images [H, W, 3], not " + describe(image));
  const auto pixels = static_cast<std::size_t>(d.height * d.width);
  if (image.dtype() == DType::f32) {
    float* p = image.data<float>().data();
    for (std::size_t i = 0; i < pixels; ++i, p += 3) {
      const std::array<float, 3> out = fn(std::array<float, 3>{p[0], p[1], p[2]});
      std::copy(out.begin(), out.end(), p);
    }
  } else {
    std::uint8_t* p = image.data<std::uint8_t>().data();
    for (std::size_t i = 0; i < pixels; ++i, p += 3) {
      const std::array<float, 3> out = fn(std::array<float, 3>{float(p[0]), float(p[1]), float(p[2])});
      for (int c = 0; c < 3; ++c) p[c] = static_cast<std::uint8_t>(std::clamp(std::lround(out[static_cast<std::size_t>(c)]), 0L, 255L));
    }
  }
  return image;
}

}  // namespace

std::array<float, 3> rotate_hue(std::array<float, 3> rgb, float degrees) {
  const float r = rgb[0], g = rgb[1], b = rgb[2];
  const float v = std::max({r, g, b}), lo = std::min({r, g, b}), delta = v - lo;
  if (delta <= 0) return rgb;  // grey: no hue
  float h;  // in sixths of a turn, [0, 6)
  if (v == r) h = std::fmod((g - b) / delta + 6.0f, 6.0f);
  else if (v == g) h = (b - r) / delta + 2.0f;
  else h = (r - g) / delta + 4.0f;
  h = std::fmod(h + degrees / 60.0f, 6.0f);
  if (h < 0) h += 6.0f;
  const float x = delta * (1 - std::abs(std::fmod(h, 2.0f) - 1));
  std::array<float, 3> out;
  switch (std::min(static_cast<int>(h), 5)) {
    case 0: out = {delta, x, 0}; break;
    case 1: out = {x, delta, 0}; break;
    case 2: out = {0, delta, x}; break;
    case 3: out = {0, x, delta}; break;
    case 4: out = {x, 0, delta}; break;
    default: out = {delta, 0, x}; break;
  }
  for (float& c : out) c += lo;
  return out;
}

Hue::Hue(float max_deg) : max_deg_(max_deg) {
  if (!(max_deg >= 0)) throw Error(ErrorCode::invalid_argument, "Hue: max_deg must be >= 0");
}

Array Hue::apply(Array image, Rng& rng) const {
  const float degrees = rng.uniform(-max_deg_, max_deg_);
  return each_pixel(std::move(image), "Hue", [&](std::array<float, 3> p) { return rotate_hue(p, degrees); });
}

Saturation::Saturation(float alpha) : alpha_(alpha) {
  if (!(alpha >= 0 && alpha <= 1)) throw Error(ErrorCode::invalid_argument, "Saturation: alpha must be in [0, 1]");
}

Array Saturation::apply(Array image, Rng& rng) const {
  const float v = 1.0f + rng.uniform(-alpha_, alpha_);
  return each_pixel(std::move(image), "Saturation", [&](std::array<float, 3> p) {
    const float grey = 0.299f * p[0] + 0.587f * p[1] + 0.114f * p[2];
    for (float& c : p) c = c * v + grey * (1 - v);
    return p;
  });
}

Lighting::Lighting(float std, std::array<float, 3> eigval, std::array<std::array<float, 3>, 3> eigvec)
    : std_(std), eigval_(eigval), eigvec_(eigvec) {
  if (!(std >= 0)) throw Error(ErrorCode::invalid_argument, "Lighting: std must be >= 0");
}

Array Lighting::apply(Array image, Rng& rng) const {
  std::array<float, 3> alpha;
  for (float& a : alpha) a = rng.normal() * std_;
  std::array<float, 3> delta{};
  for (std::size_t c = 0; c < 3; ++c)
    for (std::size_t i = 0; i < 3; ++i) delta[c] += eigvec_[c][i] * alpha[i] * eigval_[i];
  return each_pixel(std::move(image), "Lighting", [&](std::array<float, 3> p) {
    for (std::size_t c = 0; c < 3; ++c) p[c] += delta[c];
    return p;
  });
}

std::array<float, 3> rgb_to_hsv(std::array<float, 3> rgb) {
  const float r = rgb[0], g = rgb[1], b = rgb[2];
  const float v = std::max({r, g, b}), delta = v - std::min({r, g, b});
  const float s = v > 0 ? delta / v : 0.0f;
  float h = 0;
  if (delta > 0) {
    if (v == r)
      h = 60 * (g - b) / delta;
    else if (v == g)
      h = 120 + 60 * (b - r) / delta;
    else
      h = 240 + 60 * (r - g) / delta;
    if (h < 0) h += 360;
  }
  return {h, s, v};
}

std::array<float, 3> hsv_to_rgb(std::array<float, 3> hsv) {
  // A hue that is no number (NaN, inf in an f32 image) is taken as 0 rather than cast.
  const float h = std::isfinite(hsv[0]) ? std::fmod(std::fmod(hsv[0], 360.0f) + 360.0f, 360.0f) / 60.0f : 0.0f;
  const float s = hsv[1], v = hsv[2];
  const float c = v * s, x = c * (1 - std::abs(std::fmod(h, 2.0f) - 1)), m = v - c;
  const int sector = std::min(static_cast<int>(h), 5);
  static constexpr int kOrder[6][3] = {{0, 1, 2}, {1, 0, 2}, {2, 0, 1}, {2, 1, 0}, {1, 2, 0}, {0, 2, 1}};
  const float parts[3] = {c, x, 0};  // the largest, the middle, the smallest part
  std::array<float, 3> rgb{};
  for (int i = 0; i < 3; ++i) rgb[static_cast<std::size_t>(i)] = parts[kOrder[sector][i]] + m;
  return rgb;
}

ColorSpace::ColorSpace(ColorConversion conversion, bool keepdims) : conversion_(conversion), keepdims_(keepdims) {}

Array ColorSpace::apply(Array image, Rng& rng) const {
  using C = ColorConversion;
  const bool u8 = image.dtype() == DType::u8;
  const auto swap = [](std::array<float, 3> p) { return std::array<float, 3>{p[2], p[1], p[0]}; };
  // HSV as stored: u8 halves the degrees and scales S to 255.
  const auto stored = [u8](std::array<float, 3> hsv) {
    if (!u8) return hsv;
    const float h = std::round(hsv[0] / 2);
    return std::array<float, 3>{h >= 180 ? h - 180 : h, hsv[1] * 255, hsv[2]};
  };
  const auto read = [u8](std::array<float, 3> hsv) {
    return u8 ? std::array<float, 3>{hsv[0] * 2, hsv[1] / 255, hsv[2]} : hsv;
  };
  switch (conversion_) {
    case C::rgb_to_bgr:
    case C::bgr_to_rgb: return each_pixel(std::move(image), "ColorSpace", swap);
    case C::rgb_to_hsv:
      return each_pixel(std::move(image), "ColorSpace", [&](auto p) { return stored(rgb_to_hsv(p)); });
    case C::bgr_to_hsv:
      return each_pixel(std::move(image), "ColorSpace", [&](auto p) { return stored(rgb_to_hsv(swap(p))); });
    case C::hsv_to_rgb: return each_pixel(std::move(image), "ColorSpace", [&](auto p) { return hsv_to_rgb(read(p)); });
    case C::hsv_to_bgr:
      return each_pixel(std::move(image), "ColorSpace", [&](auto p) { return swap(hsv_to_rgb(read(p))); });
    case C::rgb_to_gray:
    case C::bgr_to_gray: {
      const ImageDims d = image_dims(image, "ColorSpace");
      Array grey = Grayscale(false, conversion_ == C::rgb_to_gray).apply(std::move(image), rng);
      return keepdims_ ? grey : std::move(grey).reshaped(Shape{d.height, d.width});
    }
  }
  return image;
}

}  // namespace vkp::dataflow
