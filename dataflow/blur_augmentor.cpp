#include "dataflow/blur_augmentor.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/error.h"

namespace vkp::dataflow {
namespace {

// The image as doubles, and back (u8 rounded and clamped).
std::vector<double> to_doubles(const Array& image) {
  std::vector<double> v(static_cast<std::size_t>(image.numel()));
  if (image.dtype() == DType::u8)
    std::copy(image.data<std::uint8_t>().begin(), image.data<std::uint8_t>().end(), v.begin());
  else
    std::copy(image.data<float>().begin(), image.data<float>().end(), v.begin());
  return v;
}

void store(const std::vector<double>& v, Array& out) {
  if (out.dtype() == DType::u8)
    std::transform(v.begin(), v.end(), out.data<std::uint8_t>().begin(),
                   [](double x) { return static_cast<std::uint8_t>(std::clamp(std::floor(x + 0.5), 0.0, 255.0)); });
  else
    std::transform(v.begin(), v.end(), out.data<float>().begin(), [](double x) { return static_cast<float>(x); });
}

// The lines a pass runs along: `lines` of them, each of `count` positions `stride` apart.
struct Lines {
  std::int64_t count, stride, lines;
};

// One pass of `kernel` along every line (line l starting at starts(l)), border replicated.
template <class Start>
void convolve(const std::vector<double>& in, std::vector<double>& out, const std::vector<double>& kernel,
              const Lines& along, Start starts) {
  const std::int64_t count = along.count, stride = along.stride, lines = along.lines;
  const auto half = static_cast<std::int64_t>(kernel.size() / 2);
  for (std::int64_t l = 0; l < lines; ++l) {
    const std::int64_t base = starts(l);
    for (std::int64_t i = 0; i < count; ++i) {
      double sum = 0;
      for (std::int64_t t = -half; t <= half; ++t) {
        const std::int64_t at = std::clamp<std::int64_t>(i + t, 0, count - 1);
        sum += kernel[static_cast<std::size_t>(t + half)] * in[static_cast<std::size_t>(base + at * stride)];
      }
      out[static_cast<std::size_t>(base + i * stride)] = sum;
    }
  }
}

}  // namespace

std::vector<double> gaussian_kernel(int size, double sigma) {
  require(
      size > 0 && size % 2 == 1 && std::isfinite(sigma), ErrorCode::invalid_argument,
      fmt::format("gaussian_kernel: the size must be odd and positive and sigma finite, got {} and {}", size, sigma));
  if (sigma <= 0) {
    switch (size) {
      case 1: return {1.0};
      case 3: return {0.25, 0.5, 0.25};
      case 5: return {0.0625, 0.25, 0.375, 0.25, 0.0625};
      case 7: return {0.03125, 0.109375, 0.21875, 0.28125, 0.21875, 0.109375, 0.03125};
      default: sigma = 0.3 * ((size - 1) * 0.5 - 1) + 0.8;
    }
  }
  std::vector<double> k(static_cast<std::size_t>(size));
  double total = 0;
  for (int i = 0; i < size; ++i) {
    const double x = i - (size - 1) / 2.0;
    total += k[static_cast<std::size_t>(i)] = std::exp(-x * x / (2 * sigma * sigma));
  }
  for (double& v : k) v /= total;
  return k;
}

Array gaussian_blur(const Array& image, int kx, int ky, double sigma_x, double sigma_y) {
  const ImageDims d = image_dims(image, "GaussianBlur");
  require_u8_or_f32(image, "GaussianBlur");
  const std::vector<double> along_x = gaussian_kernel(kx, sigma_x), along_y = gaussian_kernel(ky, sigma_y);
  if (image.numel() == 0 || (kx == 1 && ky == 1)) return image;
  Array out(image.dtype(), image.shape());
  std::vector<double> a = to_doubles(image), b(a.size());
  const std::int64_t c = d.channels, w = d.width, h = d.height;
  // Rows: a line per (row, channel), positions `c` apart.
  convolve(a, b, along_x, {w, c, h * c}, [&](std::int64_t l) { return (l / c) * w * c + l % c; });
  // Columns: a line per (column, channel), positions `w c` apart.
  convolve(b, a, along_y, {h, w * c, w * c}, [](std::int64_t l) { return l; });
  store(a, out);
  return out;
}

GaussianBlur::GaussianBlur(std::array<int, 2> size_range, std::array<double, 2> sigma_range, bool symmetric)
    : size_range_(size_range), sigma_range_(sigma_range), symmetric_(symmetric) {
  require(size_range_[0] >= 0 && size_range_[0] < size_range_[1], ErrorCode::invalid_argument,
          fmt::format("GaussianBlur: size_range [{}, {}) must hold a size >= 0", size_range_[0], size_range_[1]));
  require(std::isfinite(sigma_range_[0]) && std::isfinite(sigma_range_[1]) && sigma_range_[0] >= 0 &&
              sigma_range_[0] <= sigma_range_[1],
          ErrorCode::invalid_argument,
          fmt::format("GaussianBlur: sigma_range must be (low, high) with 0 <= low <= high, got ({}, {})",
                      sigma_range_[0], sigma_range_[1]));
}

Array GaussianBlur::apply(Array image, Rng& rng) const {
  const auto sizes = static_cast<std::uint64_t>(size_range_[1] - size_range_[0]);
  int kx = static_cast<int>(2 * (size_range_[0] + static_cast<int>(rng.below(sizes))) + 1);
  int ky = static_cast<int>(2 * (size_range_[0] + static_cast<int>(rng.below(sizes))) + 1);
  double sx = rng.uniform(static_cast<float>(sigma_range_[0]), static_cast<float>(sigma_range_[1]));
  double sy = rng.uniform(static_cast<float>(sigma_range_[0]), static_cast<float>(sigma_range_[1]));
  if (symmetric_) ky = kx, sy = sx;
  return gaussian_blur(image, kx, ky, sx, sy);
}

}  // namespace vkp::dataflow
