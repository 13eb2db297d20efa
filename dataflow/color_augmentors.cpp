#include "dataflow/color_augmentors.h"

#include <algorithm>
#include <cmath>

#include "core/error.h"

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

}  // namespace vkp::dataflow
