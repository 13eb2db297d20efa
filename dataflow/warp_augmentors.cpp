#include "dataflow/warp_augmentors.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numbers>

#include "core/error.h"
#include "dataflow/geometric_augmentors.h"

namespace vkp::dataflow {
namespace {

// Index of coordinate i in [0, n) under `border`; -1 for constant outside.
std::int64_t border_index(std::int64_t i, std::int64_t n, Border border) {
  if (i >= 0 && i < n) return i;
  switch (border) {
    case Border::constant: return -1;
    case Border::replicate: return std::clamp<std::int64_t>(i, 0, n - 1);
    case Border::reflect: {
      if (n == 1) return 0;
      const std::int64_t period = 2 * (n - 1);
      std::int64_t r = i % period;
      if (r < 0) r += period;
      return r < n ? r : period - r;
    }
  }
  return -1;
}

// The output's size, the inverse map (output to input pixel) and what lies outside.
struct WarpPlan {
  std::int64_t oh, ow;
  const std::array<double, 6>& m;
  Border border;
  float fill;
};

template <class T>
void warp(const T* in, const ImageDims& d, T* out, const WarpPlan& plan) {
  const std::int64_t c = d.channels, oh = plan.oh, ow = plan.ow;
  const std::array<double, 6>& m = plan.m;
  const Border border = plan.border;
  const float fill = plan.fill;
  for (std::int64_t y = 0; y < oh; ++y)
    for (std::int64_t x = 0; x < ow; ++x) {
      const double u = m[0] * static_cast<double>(x) + m[1] * static_cast<double>(y) + m[2];
      const double v = m[3] * static_cast<double>(x) + m[4] * static_cast<double>(y) + m[5];
      const double fu = std::floor(u), fv = std::floor(v);
      const double au = u - fu, av = v - fv;
      const auto x0 = static_cast<std::int64_t>(fu), y0 = static_cast<std::int64_t>(fv);
      const std::int64_t xs[2] = {border_index(x0, d.width, border), border_index(x0 + 1, d.width, border)};
      const std::int64_t ys[2] = {border_index(y0, d.height, border), border_index(y0 + 1, d.height, border)};
      const double wx[2] = {1 - au, au}, wy[2] = {1 - av, av};
      for (std::int64_t k = 0; k < c; ++k) {
        double sum = 0;
        for (int j = 0; j < 2; ++j)
          for (int i = 0; i < 2; ++i) {
            const double w = wy[j] * wx[i];
            if (w == 0) continue;
            const double value =
                ys[j] < 0 || xs[i] < 0 ? fill : static_cast<double>(in[(ys[j] * d.width + xs[i]) * c + k]);
            sum += w * value;
          }
        T& o = out[(y * ow + x) * c + k];
        if constexpr (std::is_same_v<T, std::uint8_t>)
          o = static_cast<std::uint8_t>(std::clamp(std::lround(sum), 0L, 255L));
        else
          o = static_cast<T>(sum);
      }
    }
}

// The inverse map of: about the centre (cx, cy), scale s, rotate by `deg`, shear by
// `shear_deg` horizontally, then shift by (tx, ty).
std::array<double, 6> inverse_about_centre(const ImageDims& d, double s, double deg, double shear_deg, double tx,
                                           double ty) {
  const double a = deg * std::numbers::pi / 180, sh = std::tan(shear_deg * std::numbers::pi / 180);
  const double cx = static_cast<double>(d.width - 1) / 2, cy = static_cast<double>(d.height - 1) / 2;
  // Forward linear part F = s R(a) H(sh) (R counter-clockwise on a y-down image), H = [1 sh; 0 1].
  const double ca = std::cos(a), sa = std::sin(a);
  const double f00 = s * ca, f01 = s * (ca * sh + sa), f10 = -s * sa, f11 = s * (-sa * sh + ca);
  const double det = f00 * f11 - f01 * f10;
  const double i00 = f11 / det, i01 = -f01 / det, i10 = -f10 / det, i11 = f00 / det;
  // input = I (output - centre - t) + centre
  const double ox = -cx - tx, oy = -cy - ty;
  return {i00, i01, i00 * ox + i01 * oy + cx, i10, i11, i10 * ox + i11 * oy + cy};
}

}  // namespace

Array warp_affine(const Array& image, const std::array<double, 6>& m, std::int64_t out_height, std::int64_t out_width,
                  Border border, float fill) {
  const ImageDims d = image_dims(image, "warp_affine");
  require_u8_or_f32(image, "warp_affine");
  if (d.height < 1 || d.width < 1 || out_height < 1 || out_width < 1)
    throw Error(ErrorCode::invalid_argument, "warp_affine: empty image or output: " + describe(image));
  Array out = Array::uninitialized(image.dtype(), d.with_size(out_height, out_width));
  const WarpPlan plan{out_height, out_width, m, border, fill};
  if (image.dtype() == DType::u8)
    warp(image.data<std::uint8_t>().data(), d, out.data<std::uint8_t>().data(), plan);
  else
    warp(image.data<float>().data(), d, out.data<float>().data(), plan);
  return out;
}

Rotation::Rotation(double max_deg, Border border, float fill) : max_deg_(max_deg), border_(border), fill_(fill) {}

Array Rotation::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "Rotation");
  const double deg = rng.uniform(static_cast<float>(-max_deg_), static_cast<float>(max_deg_));
  const PointMap m = inverse_about_centre(d, 1, deg, 0, 0, 0);
  move_points(points, inverse(m), "Rotation");
  return warp_affine(image, m, d.height, d.width, border_, fill_);
}

RotationAndCropValid::RotationAndCropValid(double max_deg, double step_deg) : max_deg_(max_deg), step_deg_(step_deg) {
  if (!(max_deg_ >= 0 && max_deg_ <= 180) || step_deg_ < 0 ||
      (step_deg_ > 0 && (max_deg_ != 180 || std::fmod(180.0, step_deg_) != 0)))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("RotationAndCropValid: max_deg must be in [0, 180], and with a step_deg 180, a multiple "
                            "of it; got max_deg {}, step_deg {}",
                            max_deg_, step_deg_));
}

std::array<std::int64_t, 2> largest_rotated_rect(std::int64_t w, std::int64_t h, double deg) {
  if (w <= 0 || h <= 0) return {0, 0};
  const double a = deg * std::numbers::pi / 180, sa = std::abs(std::sin(a)), ca = std::abs(std::cos(a));
  const bool wide = w >= h;
  const double longer = static_cast<double>(wide ? w : h), shorter = static_cast<double>(wide ? h : w);
  double wr = 0, hr = 0;
  if (shorter <= 2 * sa * ca * longer) {  // two corners on the longer side, two on its mid-line
    const double x = 0.5 * shorter;
    wr = wide ? x / sa : x / ca;
    hr = wide ? x / ca : x / sa;
  } else {  // touching all four sides
    const double c2 = ca * ca - sa * sa, fw = static_cast<double>(w), fh = static_cast<double>(h);
    wr = (fw * ca - fh * sa) / c2;
    hr = (fh * ca - fw * sa) / c2;
  }
  return {static_cast<std::int64_t>(std::nearbyint(wr)), static_cast<std::int64_t>(std::nearbyint(hr))};
}

Array RotationAndCropValid::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "RotationAndCropValid");
  double deg = rng.uniform(static_cast<float>(-max_deg_), static_cast<float>(max_deg_));
  if (step_deg_ > 0) deg = std::floor(deg / step_deg_) * step_deg_;
  const PointMap m = inverse_about_centre(d, 1, deg, 0, 0, 0);
  const Array turned = warp_affine(image, m, d.height, d.width, Border::constant, 0);
  const std::array<std::int64_t, 2> rect = largest_rotated_rect(d.width, d.height, deg);
  const std::int64_t w = std::clamp<std::int64_t>(rect[0], 1, d.width),
                     h = std::clamp<std::int64_t>(rect[1], 1, d.height);
  const auto left = static_cast<std::int64_t>(static_cast<double>(d.width) * 0.5 - static_cast<double>(w) * 0.5);
  const auto top = static_cast<std::int64_t>(static_cast<double>(d.height) * 0.5 - static_cast<double>(h) * 0.5);
  PointMap moved = inverse(m);
  moved[2] -= static_cast<double>(left);
  moved[5] -= static_cast<double>(top);
  move_points(points, moved, "RotationAndCropValid");
  return crop_image(turned, top, left, h, w);
}

GaussianDeform::GaussianDeform(std::vector<std::array<double, 2>> anchors, std::int64_t height, std::int64_t width,
                               double sigma, double randrange)
    : anchors_(anchors.size()),
      height_(height),
      width_(width),
      randrange_(randrange < 0 ? static_cast<double>(height) / 8 : randrange) {
  if (anchors.empty() || height <= 0 || width <= 0 || !(sigma > 0))
    throw Error(
        ErrorCode::invalid_argument,
        fmt::format("GaussianDeform: needs anchors, a positive size and sigma; got {} anchors, {} x {}, sigma {}",
                    anchors.size(), height, width, sigma));
  weights_.resize(static_cast<std::size_t>(height * width) * anchors_);
  for (std::int64_t y = 0; y < height; ++y)
    for (std::int64_t x = 0; x < width; ++x)
      for (std::size_t k = 0; k < anchors_; ++k) {
        const double dy = static_cast<double>(y) / static_cast<double>(height) - anchors[k][0];
        const double dx = static_cast<double>(x) / static_cast<double>(width) - anchors[k][1];
        weights_[static_cast<std::size_t>(y * width + x) * anchors_ + k] =
            static_cast<float>(std::exp(-(dx * dx + dy * dy) / sigma));
      }
}

Array GaussianDeform::apply(Array image, Rng& rng) const {
  const ImageDims d = image_dims(image, "GaussianDeform");
  require_u8_or_f32(image, "GaussianDeform");
  if (d.height != height_ || d.width != width_)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("GaussianDeform: built for {} x {} images, got {}", height_, width_, describe(image)));
  std::vector<double> v(2 * anchors_);
  for (double& e : v) e = (static_cast<double>(rng.uniform()) - 0.5) * 2 * randrange_;
  Array out(image.dtype(), image.shape());
  const std::int64_t c = d.channels;
  const auto read = [&](std::int64_t y, std::int64_t x, std::int64_t k) {
    const auto i = static_cast<std::size_t>((y * width_ + x) * c + k);
    return image.dtype() == DType::u8 ? static_cast<double>(image.data<std::uint8_t>()[i])
                                      : double{image.data<float>()[i]};
  };
  for (std::int64_t y = 0; y < height_; ++y)
    for (std::int64_t x = 0; x < width_; ++x) {
      double sy = static_cast<double>(y), sx = static_cast<double>(x);
      const float* g = &weights_[static_cast<std::size_t>(y * width_ + x) * anchors_];
      for (std::size_t k = 0; k < anchors_; ++k) sy += g[k] * v[2 * k], sx += g[k] * v[2 * k + 1];
      sy = std::clamp(sy, 0.0, static_cast<double>(height_ - 1));
      sx = std::clamp(sx, 0.0, static_cast<double>(width_ - 1));
      const auto y0 = static_cast<std::int64_t>(sy), x0 = static_cast<std::int64_t>(sx);
      const std::int64_t y1 = std::min(y0 + 1, height_ - 1), x1 = std::min(x0 + 1, width_ - 1);
      const double fy = sy - static_cast<double>(y0), fx = sx - static_cast<double>(x0);
      for (std::int64_t k = 0; k < c; ++k) {
        const double value = read(y0, x0, k) * (1 - fx) * (1 - fy) + read(y1, x1, k) * fx * fy +
                             read(y0, x1, k) * (1 - fy) * fx + read(y1, x0, k) * fy * (1 - fx);
        const auto o = static_cast<std::size_t>((y * width_ + x) * c + k);
        if (image.dtype() == DType::u8)
          out.data<std::uint8_t>()[o] = static_cast<std::uint8_t>(std::clamp(std::floor(value + 0.5), 0.0, 255.0));
        else
          out.data<float>()[o] = static_cast<float>(value);
      }
    }
  return out;
}

Affine::Affine(const AffineOptions& options) : o_(options) {
  if (!(o_.scale_min > 0 && o_.scale_max >= o_.scale_min))
    throw Error(ErrorCode::invalid_argument, "Affine: the scale range must be positive and ordered");
}

Array Affine::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "Affine");
  const auto draw = [&](double lo, double hi) {
    return static_cast<double>(rng.uniform(static_cast<float>(lo), static_cast<float>(hi)));
  };
  const double s = draw(o_.scale_min, o_.scale_max), deg = draw(-o_.rotate_max_deg, o_.rotate_max_deg),
               shear = draw(-o_.shear_max_deg, o_.shear_max_deg);
  const double tx = draw(-o_.translate_frac, o_.translate_frac) * static_cast<double>(d.width),
               ty = draw(-o_.translate_frac, o_.translate_frac) * static_cast<double>(d.height);
  const PointMap m = inverse_about_centre(d, s, deg, shear, tx, ty);
  move_points(points, inverse(m), "Affine");
  return warp_affine(image, m, d.height, d.width, o_.border, o_.fill);
}

ResizeShortestEdge::ResizeShortestEdge(std::int64_t size) : size_(size) {
  if (size < 1) throw Error(ErrorCode::invalid_argument, "ResizeShortestEdge: the size must be >= 1");
}

Array ResizeShortestEdge::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "ResizeShortestEdge");
  const double scale = static_cast<double>(size_) / static_cast<double>(std::min(d.height, d.width));
  const std::int64_t h = d.height <= d.width ? size_ : std::llround(static_cast<double>(d.height) * scale);
  const std::int64_t w = d.width < d.height ? size_ : std::llround(static_cast<double>(d.width) * scale);
  return Resize(h, w).apply_with_points(std::move(image), points, rng);
}

GoogleNetRandomCropAndResize::GoogleNetRandomCropAndResize(std::int64_t height, std::int64_t width,
                                                           std::array<double, 2> area, std::array<double, 2> aspect)
    : height_(height), width_(width), area_(area), aspect_(aspect) {}

Array GoogleNetRandomCropAndResize::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "GoogleNetRandomCropAndResize");
  const double total = static_cast<double>(d.height * d.width);
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = total * rng.uniform(static_cast<float>(area_[0]), static_cast<float>(area_[1]));
    const double ratio =
        std::exp(rng.uniform(static_cast<float>(std::log(aspect_[0])), static_cast<float>(std::log(aspect_[1]))));
    const std::int64_t w = std::llround(std::sqrt(target * ratio)), h = std::llround(std::sqrt(target / ratio));
    if (w < 1 || h < 1 || w > d.width || h > d.height) continue;
    const auto top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.height - h + 1)));
    const auto left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.width - w + 1)));
    move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)},
                "GoogleNetRandomCropAndResize");
    return Resize(height_, width_).apply_with_points(crop_image(image, top, left, h, w), points, rng);
  }
  const std::int64_t side = std::min(d.height, d.width);
  const std::int64_t top = (d.height - side) / 2, left = (d.width - side) / 2;
  move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)},
              "GoogleNetRandomCropAndResize");
  return Resize(height_, width_).apply_with_points(crop_image(image, top, left, side, side), points, rng);
}

RandomCutout::RandomCutout(std::int64_t min_size, std::int64_t max_size, float fill)
    : RandomCutout({min_size, max_size}, {min_size, max_size}, fill) {}

RandomCutout::RandomCutout(std::array<std::int64_t, 2> h_range, std::array<std::int64_t, 2> w_range, float fill)
    : h_range_(h_range), w_range_(w_range), fill_(fill) {
  for (const auto& [lo, hi] : {h_range_, w_range_})
    if (lo < 1 || hi < lo)
      throw Error(ErrorCode::invalid_argument, "RandomCutout: sizes must satisfy 1 <= min <= max, got [" +
                                                   std::to_string(lo) + ", " + std::to_string(hi) + "]");
}

Array RandomCutout::apply(Array image, Rng& rng) const {
  const ImageDims d = image_dims(image, "RandomCutout");
  require_u8_or_f32(image, "RandomCutout");
  const auto size = [&](const std::array<std::int64_t, 2>& range) {
    return range[0] + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(range[1] - range[0] + 1)));
  };
  const std::int64_t h = size(h_range_), w = size(w_range_);
  // The centre anywhere in the image, so the rectangle may cross the border.
  const auto cy = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.height)));
  const auto cx = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.width)));
  const std::int64_t y0 = std::max<std::int64_t>(0, cy - h / 2), y1 = std::min(d.height, cy - h / 2 + h);
  const std::int64_t x0 = std::max<std::int64_t>(0, cx - w / 2), x1 = std::min(d.width, cx - w / 2 + w);
  for (std::int64_t y = y0; y < y1; ++y)
    for (std::int64_t x = x0; x < x1; ++x)
      for (std::int64_t k = 0; k < d.channels; ++k) {
        const auto i = static_cast<std::size_t>((y * d.width + x) * d.channels + k);
        if (image.dtype() == DType::u8)
          image.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(std::clamp(std::lround(fill_), 0L, 255L));
        else
          image.data<float>()[i] = fill_;
      }
  return image;
}

}  // namespace vkp::dataflow
