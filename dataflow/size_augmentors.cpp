#include "dataflow/size_augmentors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include <fmt/format.h>

#include "core/error.h"
#include "core/log.h"
#include "dataflow/geometric_augmentors.h"

namespace vkp::dataflow {
namespace {

void require_range(const std::array<double, 2>& r, const char* what) {
  require(std::isfinite(r[0]) && std::isfinite(r[1]) && r[0] > 0 && r[0] <= r[1], ErrorCode::invalid_argument,
          fmt::format("RandomResize: {} must be (low, high) with 0 < low <= high, got ({}, {})", what, r[0], r[1]));
}

// The image's extents, refusing an empty one by `who`.
ImageDims nonempty(const Array& image, const char* who) {
  const ImageDims d = image_dims(image, who);
  require(d.height > 0 && d.width > 0, ErrorCode::invalid_argument,
          std::string(who) + ": the image is empty: " + describe(image));
  return d;
}

}  // namespace

RandomResize::RandomResize(RandomResizeOptions options) : o_(std::move(options)) {
  require_range(o_.xrange, "xrange");
  if (o_.yrange) require_range(*o_.yrange, "yrange");
  require(o_.aspect_ratio_thres >= 0 && std::isfinite(o_.aspect_ratio_thres), ErrorCode::invalid_argument,
          fmt::format("RandomResize: aspect_ratio_thres must be >= 0, got {}", o_.aspect_ratio_thres));
  require(o_.aspect_ratio_thres == 0 || o_.yrange.has_value(), ErrorCode::invalid_argument,
          "RandomResize: give a yrange, or aspect_ratio_thres 0 to keep the aspect ratio");
  require(o_.minimum[0] >= 0 && o_.minimum[1] >= 0, ErrorCode::invalid_argument,
          "RandomResize: the minimum size must not be negative");
}

Array RandomResize::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = nonempty(image, "RandomResize");
  const double w = static_cast<double>(d.width), h = static_cast<double>(d.height);
  for (int tries = 0; tries <= 50; ++tries) {
    const double sx = rng.uniform(static_cast<float>(o_.xrange[0]), static_cast<float>(o_.xrange[1]));
    double sy = 0;
    if (o_.aspect_ratio_thres == 0)
      sy = o_.ratios ? sx : sx / w * h;
    else
      sy = rng.uniform(static_cast<float>((*o_.yrange)[0]), static_cast<float>((*o_.yrange)[1]));
    const double dest_x = std::max(o_.ratios ? sx * w : sx, static_cast<double>(o_.minimum[0]));
    const double dest_y = std::max(o_.ratios ? sy * h : sy, static_cast<double>(o_.minimum[1]));
    const auto new_w = std::max<std::int64_t>(1, static_cast<std::int64_t>(dest_x + 0.5));
    const auto new_h = std::max<std::int64_t>(1, static_cast<std::int64_t>(dest_y + 0.5));
    if (o_.aspect_ratio_thres > 0) {
      const double old_ratio = w / h, new_ratio = static_cast<double>(new_w) / static_cast<double>(new_h);
      if (std::abs(new_ratio - old_ratio) / old_ratio >= o_.aspect_ratio_thres + 1e-5) continue;
    }
    return Resize(new_h, new_w).apply_with_points(std::move(image), points, rng);
  }
  log_warn("RandomResize: no size within the aspect-ratio threshold in 50 draws; the image passes unchanged");
  move_points(points, {1, 0, 0, 0, 1, 0}, "RandomResize");  // checks them, moves nothing
  return image;
}

RandomCropRandomShape::RandomCropRandomShape(std::int64_t wmin, std::int64_t hmin, std::int64_t wmax, std::int64_t hmax,
                                             double max_aspect_ratio)
    : wmin_(wmin), hmin_(hmin), wmax_(wmax), hmax_(hmax), max_aspect_ratio_(max_aspect_ratio) {
  require(wmin_ > 0 && hmin_ > 0, ErrorCode::invalid_argument, "RandomCropRandomShape: wmin and hmin must be positive");
  require((wmax_ == 0 || wmax_ >= wmin_) && (hmax_ == 0 || hmax_ >= hmin_), ErrorCode::invalid_argument,
          fmt::format("RandomCropRandomShape: the largest crop ({} x {}) is below the smallest ({} x {})", wmax_, hmax_,
                      wmin_, hmin_));
  require(max_aspect_ratio_ == 0 || max_aspect_ratio_ >= 1, ErrorCode::invalid_argument,
          fmt::format("RandomCropRandomShape: max_aspect_ratio must be 0 (any) or at least 1, got {}", max_aspect_ratio_));
}

Array RandomCropRandomShape::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = nonempty(image, "RandomCropRandomShape");
  require(d.height >= hmin_ && d.width >= wmin_, ErrorCode::invalid_argument,
          fmt::format("RandomCropRandomShape: the image ({} x {}) is smaller than the smallest crop ({} x {})", d.width,
                      d.height, wmin_, hmin_));
  const std::int64_t hmax = std::min(hmax_ == 0 ? d.height : hmax_, d.height);
  const std::int64_t wmax = std::min(wmax_ == 0 ? d.width : wmax_, d.width);
  std::int64_t h = 0, w = 0;
  for (int tries = 0;; ++tries) {
    h = hmin_ + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(hmax - hmin_ + 1)));
    w = wmin_ + static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(wmax - wmin_ + 1)));
    const double ratio = static_cast<double>(std::max(h, w)) / static_cast<double>(std::min(h, w));
    if (max_aspect_ratio_ == 0 || ratio <= max_aspect_ratio_) break;
    require(tries < 1000, ErrorCode::invalid_argument,
            fmt::format("RandomCropRandomShape: no crop within aspect ratio {} in 1000 draws from {}..{} x {}..{}",
                        max_aspect_ratio_, wmin_, wmax, hmin_, hmax));
  }
  const std::int64_t top = h == d.height ? 0 : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.height - h)));
  const std::int64_t left = w == d.width ? 0 : static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.width - w)));
  move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)}, "RandomCropRandomShape");
  return crop_image(image, top, left, h, w);
}

CenterPaste::CenterPaste(std::int64_t height, std::int64_t width, float fill)
    : height_(height), width_(width), fill_(fill) {
  require(height_ > 0 && width_ > 0, ErrorCode::invalid_argument,
          fmt::format("paste: the canvas must have a positive size, got {} x {}", width_, height_));
}

Array CenterPaste::paste(const Array& image, std::int64_t top, std::int64_t left, Array& points, const char* who) const {
  const ImageDims d = image_dims(image, who);
  require_u8_or_f32(image, who);
  move_points(points, {1, 0, static_cast<double>(left), 0, 1, static_cast<double>(top)}, who);
  Array canvas(image.dtype(), d.with_size(height_, width_));
  if (image.dtype() == DType::u8)
    std::fill(canvas.data<std::uint8_t>().begin(), canvas.data<std::uint8_t>().end(),
              static_cast<std::uint8_t>(std::clamp(fill_ + 0.5f, 0.0f, 255.0f)));
  else
    std::fill(canvas.data<float>().begin(), canvas.data<float>().end(), fill_);
  const std::size_t element = image.dtype() == DType::u8 ? 1 : 4;
  const auto row_bytes = static_cast<std::size_t>(d.width * d.channels) * element;
  const std::byte* src = image.bytes().data();
  std::byte* dst = canvas.bytes().data();
  for (std::int64_t y = 0; y < d.height; ++y)
    std::memcpy(dst + static_cast<std::size_t>(((top + y) * width_ + left) * d.channels) * element,
                src + static_cast<std::size_t>(y) * row_bytes, row_bytes);
  return canvas;
}

Array CenterPaste::apply_with_points(Array image, Array& points, Rng&) const {
  const ImageDims d = image_dims(image, "CenterPaste");
  require(d.height <= height_ && d.width <= width_, ErrorCode::invalid_argument,
          fmt::format("CenterPaste: the image ({} x {}) does not fit the canvas ({} x {})", d.width, d.height, width_,
                      height_));
  return paste(image, (height_ - d.height) / 2, (width_ - d.width) / 2, points, "CenterPaste");
}

Array RandomPaste::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "RandomPaste");
  require(d.height < height_ && d.width < width_, ErrorCode::invalid_argument,
          fmt::format("RandomPaste: the canvas ({} x {}) must be larger than the image ({} x {}) in both extents",
                      width_, height_, d.width, d.height));
  const auto top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(height_ - d.height)));
  const auto left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(width_ - d.width)));
  return paste(image, top, left, points, "RandomPaste");
}

}  // namespace vkp::dataflow
