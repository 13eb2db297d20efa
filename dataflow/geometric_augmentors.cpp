#include "dataflow/geometric_augmentors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <string>
#include <type_traits>

namespace vkp::dataflow {
namespace {

void require_positive_size(std::int64_t height, std::int64_t width, const char* who) {
  require(height > 0 && width > 0, ErrorCode::invalid_argument,
          std::string(who) + ": the output size must be positive, got " + std::to_string(height) + " x " +
              std::to_string(width));
}

void require_fits(const Array& image, const ImageDims& d, std::int64_t height, std::int64_t width, const char* who) {
  if (height > d.height || width > d.width)
    throw Error(ErrorCode::invalid_argument, std::string(who) + ": cannot take a " + std::to_string(height) + " x " +
                                                 std::to_string(width) + " window from image " + describe(image));
}

// One element of `dtype` holding `value`, as bytes.
struct Element {
  std::byte bytes[8] = {};
  std::size_t size = 0;
  bool zero = true;
};

Element element_of(DType dtype, float value) {
  Element e;
  e.size = size_of(dtype);
  e.zero = value == 0;
  switch (dtype) {
    case DType::f32: std::memcpy(e.bytes, &value, 4); break;
    case DType::u8: e.bytes[0] = static_cast<std::byte>(std::clamp(std::lround(value), 0L, 255L)); break;
    case DType::i32: {
      const auto v = static_cast<std::int32_t>(value);
      std::memcpy(e.bytes, &v, 4);
      break;
    }
    case DType::i64: {
      const auto v = static_cast<std::int64_t>(value);
      std::memcpy(e.bytes, &v, 8);
      break;
    }
    case DType::f16:
      if (!e.zero) throw Error(ErrorCode::invalid_argument, "Shift: a non-zero fill value is not supported for f16 images");
  }
  return e;
}

// Fills `nbytes` with copies of e. A shift's side borders are runs of a few pixels, as
// many as the image has rows: those are written inline rather than by calls to memset.
void fill_bytes(std::byte* p, std::size_t nbytes, const Element& e) {
  if (e.zero && nbytes >= 64) {
    std::memset(p, 0, nbytes);
    return;
  }
  const auto copies = [&]<std::size_t N>(std::integral_constant<std::size_t, N>) {
    for (std::size_t i = 0; i < nbytes; i += N) std::memcpy(p + i, e.bytes, N);
  };
  switch (e.size) {
    case 1: copies(std::integral_constant<std::size_t, 1>{}); break;
    case 2: copies(std::integral_constant<std::size_t, 2>{}); break;
    case 4: copies(std::integral_constant<std::size_t, 4>{}); break;
    default: copies(std::integral_constant<std::size_t, 8>{}); break;
  }
}

template <class T>
void resize_bilinear(const T* src, const ImageDims& in, T* dst, std::int64_t out_h, std::int64_t out_w) {
  const std::int64_t c = in.channels;
  // Source coordinate of output index i: (i + 0.5) * scale - 0.5, clamped to the image.
  const auto taps = [](std::int64_t out, std::int64_t n, std::vector<std::int64_t>& i0, std::vector<float>& frac) {
    const double scale = static_cast<double>(n) / static_cast<double>(out);
    for (std::int64_t i = 0; i < out; ++i) {
      const double s = std::clamp((static_cast<double>(i) + 0.5) * scale - 0.5, 0.0, static_cast<double>(n - 1));
      const auto lo = static_cast<std::int64_t>(s);
      i0.push_back(lo);
      frac.push_back(static_cast<float>(s - static_cast<double>(lo)));
    }
  };
  std::vector<std::int64_t> y0, x0;
  std::vector<float> fy, fx;
  taps(out_h, in.height, y0, fy);
  taps(out_w, in.width, x0, fx);
  const std::int64_t row = in.width * c;
  for (std::int64_t y = 0; y < out_h; ++y) {
    const T* r0 = src + y0[y] * row;
    const T* r1 = src + std::min(y0[y] + 1, in.height - 1) * row;
    for (std::int64_t x = 0; x < out_w; ++x) {
      const std::int64_t a = x0[x] * c, b = std::min(x0[x] + 1, in.width - 1) * c;
      for (std::int64_t k = 0; k < c; ++k) {
        const float top = static_cast<float>(r0[a + k]) + fx[x] * (static_cast<float>(r0[b + k]) - static_cast<float>(r0[a + k]));
        const float bottom = static_cast<float>(r1[a + k]) + fx[x] * (static_cast<float>(r1[b + k]) - static_cast<float>(r1[a + k]));
        const float v = top + fy[y] * (bottom - top);
        if constexpr (std::is_same_v<T, std::uint8_t>)
          dst[(y * out_w + x) * c + k] = static_cast<std::uint8_t>(std::clamp(v + 0.5f, 0.0f, 255.0f));
        else
          dst[(y * out_w + x) * c + k] = v;
      }
    }
  }
}

// Reverses [first, last) in place. Exchanging fixed-size blocks from both ends, each
// reversed in registers, takes about two thirds of std::reverse's time on short rows.
template <class T>
void reverse_elements(T* first, T* last) {
  constexpr std::ptrdiff_t kBlock = 16 / sizeof(T) > 0 ? 16 / sizeof(T) : 1;
  while (last - first >= 2 * kBlock) {
    T head[kBlock], tail[kBlock];
    for (std::ptrdiff_t k = 0; k < kBlock; ++k) head[k] = first[k];
    for (std::ptrdiff_t k = 0; k < kBlock; ++k) tail[k] = last[-1 - k];
    for (std::ptrdiff_t k = 0; k < kBlock; ++k) first[k] = tail[k];
    for (std::ptrdiff_t k = 0; k < kBlock; ++k) last[-1 - k] = head[k];
    first += kBlock;
    last -= kBlock;
  }
  std::reverse(first, last);
}

// Mirrors each of `height` rows of `width` pixels of `channels` elements of T, in place.
template <class T>
void mirror_rows(std::span<T> image, std::int64_t height, std::int64_t width, std::int64_t channels) {
  for (std::int64_t y = 0; y < height; ++y) {
    T* row = image.data() + y * width * channels;
    if (channels == 1) {
      reverse_elements(row, row + width);
      continue;
    }
    for (std::int64_t x = 0; x < width / 2; ++x)
      std::swap_ranges(row + x * channels, row + (x + 1) * channels, row + (width - 1 - x) * channels);
  }
}

}  // namespace

Array crop_image(const Array& image, std::int64_t top, std::int64_t left, std::int64_t height, std::int64_t width) {
  const ImageDims d = image_dims(image, "crop_image");
  if (top < 0 || left < 0 || height < 0 || width < 0 || top + height > d.height || left + width > d.width)
    throw Error(ErrorCode::invalid_argument, "crop_image: the window at (" + std::to_string(top) + ", " +
                                                 std::to_string(left) + ") of " + std::to_string(height) + " x " +
                                                 std::to_string(width) + " is not inside image " + describe(image));
  Array out = Array::uninitialized(image.dtype(), d.with_size(height, width));
  const std::size_t pixel = static_cast<std::size_t>(d.channels) * size_of(image.dtype());
  const std::size_t in_row = static_cast<std::size_t>(d.width) * pixel, out_row = static_cast<std::size_t>(width) * pixel;
  const std::byte* src = image.bytes().data() + static_cast<std::size_t>(top) * in_row + static_cast<std::size_t>(left) * pixel;
  std::byte* dst = out.bytes().data();
  if (out_row == 0) return out;
  for (std::int64_t y = 0; y < height; ++y) std::memcpy(dst + static_cast<std::size_t>(y) * out_row, src + static_cast<std::size_t>(y) * in_row, out_row);
  return out;
}

Transpose::Transpose(double prob) : prob_(prob) {
  require(prob_ >= 0 && prob_ <= 1, ErrorCode::invalid_argument,
          "Transpose: prob must be in [0, 1], got " + std::to_string(prob_));
}

Array Transpose::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "Transpose");
  if (rng.uniform() >= prob_) {
    move_points(points, {1, 0, 0, 0, 1, 0}, "Transpose");
    return image;
  }
  move_points(points, {0, 1, 0, 1, 0, 0}, "Transpose");
  Array out(image.dtype(), d.with_size(d.width, d.height));
  const std::size_t pixel = static_cast<std::size_t>(d.channels) * size_of(image.dtype());
  const std::byte* in = image.bytes().data();
  std::byte* o = out.bytes().data();
  for (std::int64_t y = 0; y < d.height; ++y)
    for (std::int64_t x = 0; x < d.width; ++x)
      std::memcpy(o + static_cast<std::size_t>(x * d.height + y) * pixel, in + static_cast<std::size_t>(y * d.width + x) * pixel,
                  pixel);
  return out;
}

Flip::Flip(FlipAxis axis, double prob) : axis_(axis), prob_(prob) {
  require(prob_ >= 0 && prob_ <= 1, ErrorCode::invalid_argument,
          "Flip: prob must be in [0, 1], got " + std::to_string(prob_));
}

Array Flip::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "Flip");
  if (rng.uniform() >= prob_) {
    move_points(points, {1, 0, 0, 0, 1, 0}, "Flip");
    return image;
  }
  const auto last_x = static_cast<double>(d.width - 1), last_y = static_cast<double>(d.height - 1);
  move_points(points, axis_ == FlipAxis::horizontal ? PointMap{-1, 0, last_x, 0, 1, 0} : PointMap{1, 0, 0, 0, -1, last_y},
              "Flip");
  const std::size_t pixel = static_cast<std::size_t>(d.channels) * size_of(image.dtype());
  const std::size_t row = static_cast<std::size_t>(d.width) * pixel;
  std::byte* p = image.bytes().data();
  if (axis_ == FlipAxis::vertical) {
    for (std::int64_t y = 0; y < d.height / 2; ++y)
      std::swap_ranges(p + static_cast<std::size_t>(y) * row, p + static_cast<std::size_t>(y + 1) * row,
                       p + static_cast<std::size_t>(d.height - 1 - y) * row);
    return image;
  }
  switch (image.dtype()) {
    case DType::f32: mirror_rows(image.data<float>(), d.height, d.width, d.channels); break;
    case DType::u8: mirror_rows(image.data<std::uint8_t>(), d.height, d.width, d.channels); break;
    case DType::i32: mirror_rows(image.data<std::int32_t>(), d.height, d.width, d.channels); break;
    case DType::i64: mirror_rows(image.data<std::int64_t>(), d.height, d.width, d.channels); break;
    case DType::f16:  // half floats are stored as their 16 bits
      mirror_rows(std::span<std::uint16_t>(reinterpret_cast<std::uint16_t*>(image.bytes().data()), image.nbytes() / 2),
                  d.height, d.width, d.channels);
      break;
  }
  return image;
}

RandomCrop::RandomCrop(std::int64_t height, std::int64_t width) : height_(height), width_(width) {
  require_positive_size(height_, width_, "RandomCrop");
}

Array RandomCrop::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "RandomCrop");
  require_fits(image, d, height_, width_, "RandomCrop");
  const auto top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.height - height_ + 1)));
  const auto left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(d.width - width_ + 1)));
  move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)}, "RandomCrop");
  return crop_image(image, top, left, height_, width_);
}

CenterCrop::CenterCrop(std::int64_t height, std::int64_t width) : height_(height), width_(width) {
  require_positive_size(height_, width_, "CenterCrop");
}

Array CenterCrop::apply_with_points(Array image, Array& points, Rng&) const {
  const ImageDims d = image_dims(image, "CenterCrop");
  require_fits(image, d, height_, width_, "CenterCrop");
  const std::int64_t top = (d.height - height_) / 2, left = (d.width - width_) / 2;
  move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)}, "CenterCrop");
  return crop_image(image, top, left, height_, width_);
}

Shift::Shift(std::int64_t pad, std::int64_t height, std::int64_t width, float fill)
    : pad_(pad), height_(height), width_(width), fill_(fill) {
  require(pad_ >= 0, ErrorCode::invalid_argument, "Shift: pad must be >= 0, got " + std::to_string(pad_));
  require_positive_size(height_, width_, "Shift");
}

Array Shift::apply_with_points(Array image, Array& points, Rng& rng) const {
  const ImageDims d = image_dims(image, "Shift");
  const std::int64_t padded_h = d.height + 2 * pad_, padded_w = d.width + 2 * pad_;
  require_fits(image, ImageDims{padded_h, padded_w, d.channels, d.rank}, height_, width_, "Shift (after padding)");
  // Window origin in padded coordinates, then in image coordinates.
  const std::int64_t top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(padded_h - height_ + 1))) - pad_;
  const std::int64_t left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(padded_w - width_ + 1))) - pad_;
  move_points(points, {1, 0, -static_cast<double>(left), 0, 1, -static_cast<double>(top)}, "Shift");
  const Element fill = element_of(image.dtype(), fill_);
  const bool in_place = height_ == d.height && width_ == d.width;
  Array out = in_place ? std::move(image) : Array::uninitialized(image.dtype(), d.with_size(height_, width_));
  const Array& in = in_place ? out : image;
  const std::size_t pixel = static_cast<std::size_t>(d.channels) * size_of(in.dtype());
  const std::size_t in_row = static_cast<std::size_t>(d.width) * pixel, out_row = static_cast<std::size_t>(width_) * pixel;
  // Output columns [x_begin, x_end) and rows [y_begin, y_end) come from the image.
  const std::int64_t x_begin = std::clamp<std::int64_t>(-left, 0, width_), x_end = std::clamp(d.width - left, x_begin, width_);
  const std::int64_t y_begin = std::clamp<std::int64_t>(-top, 0, height_), y_end = std::clamp(d.height - top, y_begin, height_);
  const std::byte* src = in.bytes().data();
  std::byte* dst = out.bytes().data();
  const std::size_t out_bytes = static_cast<std::size_t>(height_) * out_row;
  if (x_begin == x_end || y_begin == y_end) {  // the window misses the image
    fill_bytes(dst, out_bytes, fill);
    return out;
  }
  const std::size_t middle = static_cast<std::size_t>(x_end - x_begin) * pixel;
  const auto move_row = [&](std::int64_t y) {
    // memmove: in place, the source row may be this very row.
    std::memmove(dst + static_cast<std::size_t>(y) * out_row + static_cast<std::size_t>(x_begin) * pixel,
                 src + static_cast<std::size_t>(y + top) * in_row + static_cast<std::size_t>(x_begin + left) * pixel,
                 middle);
  };
  // In place, rows are moved in the order that reads every source row before it is
  // overwritten; the fill goes in afterwards, where nothing is read any more.
  if (top >= 0)
    for (std::int64_t y = y_begin; y < y_end; ++y) move_row(y);
  else
    for (std::int64_t y = y_end; y-- > y_begin;) move_row(y);
  // What lies outside the window, in row-major order, is a run before its first pixel,
  // one between the end of each row's part and the start of the next row's, and one
  // after its last pixel.
  const auto offset = [&](std::int64_t y, std::int64_t x) {
    return static_cast<std::size_t>(y) * out_row + static_cast<std::size_t>(x) * pixel;
  };
  fill_bytes(dst, offset(y_begin, x_begin), fill);
  for (std::int64_t y = y_begin; y + 1 < y_end; ++y)
    fill_bytes(dst + offset(y, x_end), offset(y + 1, x_begin) - offset(y, x_end), fill);
  fill_bytes(dst + offset(y_end - 1, x_end), out_bytes - offset(y_end - 1, x_end), fill);
  return out;
}

Resize::Resize(std::int64_t height, std::int64_t width) : height_(height), width_(width) {
  require_positive_size(height_, width_, "Resize");
}

PointMap resize_map(std::int64_t in_h, std::int64_t in_w, std::int64_t out_h, std::int64_t out_w) {
  // Output pixel i samples the input at (i + 0.5) * in / out - 0.5; inverted.
  const double sx = static_cast<double>(out_w) / static_cast<double>(in_w);
  const double sy = static_cast<double>(out_h) / static_cast<double>(in_h);
  return {sx, 0, 0.5 * sx - 0.5, 0, sy, 0.5 * sy - 0.5};
}

Array Resize::apply_with_points(Array image, Array& points, Rng&) const {
  const ImageDims d = image_dims(image, "Resize");
  require_u8_or_f32(image, "Resize");
  require(d.height > 0 && d.width > 0, ErrorCode::invalid_argument, "Resize: cannot resize an empty image " + describe(image));
  move_points(points, resize_map(d.height, d.width, height_, width_), "Resize");
  Array out = Array::uninitialized(image.dtype(), d.with_size(height_, width_));
  if (image.dtype() == DType::u8)
    resize_bilinear(image.data<std::uint8_t>().data(), d, out.data<std::uint8_t>().data(), height_, width_);
  else
    resize_bilinear(image.data<float>().data(), d, out.data<float>().data(), height_, width_);
  return out;
}

}  // namespace vkp::dataflow
