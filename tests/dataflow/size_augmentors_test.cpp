// Augmentors of drawn or set size (RandomResize, RandomCropRandomShape, CenterPaste,
// RandomPaste) and GaussianBlur. Crops and pastes are checked by reading back where each
// pixel went (every pixel of the test image has its own value), over many draws for the
// ranges tensorpack draws from; GaussianBlur against a direct 2-D convolution in double
// with the border replicated, written here.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include "core/error.h"
#include "dataflow/blur_augmentor.h"
#include "dataflow/geometric_augmentors.h"
#include "dataflow/size_augmentors.h"

namespace vkp::dataflow {
namespace {

// Pixel (y, x, k) holds 1000 y + 10 x + k: every value says where it came from.
Array labelled(std::int64_t h, std::int64_t w, std::int64_t c) {
  Array a(DType::f32, Shape{h, w, c});
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (std::int64_t k = 0; k < c; ++k)
        a.data<float>()[static_cast<std::size_t>((y * w + x) * c + k)] = static_cast<float>(1000 * y + 10 * x + k);
  return a;
}

float at(const Array& a, std::int64_t y, std::int64_t x, std::int64_t k = 0) {
  return a.data<float>()[static_cast<std::size_t>((y * a.shape()[1] + x) * a.shape()[2] + k)];
}

Array one_point(float x, float y) {
  Array p(DType::f32, Shape{1, 2});
  p.data<float>()[0] = x;
  p.data<float>()[1] = y;
  return p;
}

TEST(RandomCropRandomShape, CropsOfEverySizeInRangeAtTensorpacksOffsets) {
  const RandomCropRandomShape crop(3, 2, 6, 4, 2.0);
  Rng rng(1);
  std::set<std::int64_t> heights, widths, tops;
  for (int i = 0; i < 400; ++i) {
    Array points = one_point(4, 3);  // the centre of pixel (row 3, column 4)
    const Array out = crop.apply_with_points(labelled(5, 8, 2), points, rng);
    const std::int64_t h = out.shape()[0], w = out.shape()[1];
    ASSERT_TRUE(h >= 2 && h <= 4 && w >= 3 && w <= 6) << h << " x " << w;
    ASSERT_LE(static_cast<double>(std::max(h, w)) / static_cast<double>(std::min(h, w)), 2.0);
    const auto top = static_cast<std::int64_t>(at(out, 0, 0)) / 1000, left = static_cast<std::int64_t>(at(out, 0, 0)) % 1000 / 10;
    ASSERT_LT(top, 5 - h) << "tensorpack's randint(H - h) never reaches H - h";
    ASSERT_LT(left, 8 - w);
    for (std::int64_t y = 0; y < h; ++y)
      for (std::int64_t x = 0; x < w; ++x) ASSERT_EQ(at(out, y, x, 1), 1000 * (top + y) + 10 * (left + x) + 1);
    EXPECT_FLOAT_EQ(points.data<float>()[0], 4.0f - static_cast<float>(left));
    EXPECT_FLOAT_EQ(points.data<float>()[1], 3.0f - static_cast<float>(top));
    heights.insert(h), widths.insert(w), tops.insert(top);
  }
  EXPECT_EQ(heights, (std::set<std::int64_t>{2, 3, 4}));
  EXPECT_EQ(widths, (std::set<std::int64_t>{3, 4, 5, 6}));
  EXPECT_EQ(tops, (std::set<std::int64_t>{0, 1, 2}));
  // A crop as large as the image starts at 0; an image below the smallest crop is refused.
  const Array whole = RandomCropRandomShape(8, 5).apply(labelled(5, 8, 1), rng);
  EXPECT_EQ(whole.shape(), (Shape{5, 8, 1}));
  EXPECT_THROW(RandomCropRandomShape(9, 2).apply(labelled(5, 8, 1), rng), Error);
  EXPECT_THROW(RandomCropRandomShape(4, 2, 3, 0), Error);
}

TEST(CenterPaste, PutsTheImageAtTheCentreOfAFilledCanvas) {
  Rng rng(2);
  Array points = one_point(1, 0);
  const Array out = CenterPaste(6, 7, 9.5f).apply_with_points(labelled(3, 2, 2), points, rng);
  ASSERT_EQ(out.shape(), (Shape{6, 7, 2}));
  // (6 - 3) / 2 = 1 row and (7 - 2) / 2 = 2 columns before the image.
  for (std::int64_t y = 0; y < 6; ++y)
    for (std::int64_t x = 0; x < 7; ++x)
      for (std::int64_t k = 0; k < 2; ++k) {
        const bool inside = y >= 1 && y < 4 && x >= 2 && x < 4;
        EXPECT_EQ(at(out, y, x, k), inside ? 1000 * (y - 1) + 10 * (x - 2) + k : 9.5f) << y << "," << x;
      }
  EXPECT_FLOAT_EQ(points.data<float>()[0], 3.0f);
  EXPECT_FLOAT_EQ(points.data<float>()[1], 1.0f);
  Array u8(DType::u8, Shape{1, 1});
  u8.data<std::uint8_t>()[0] = 200;
  const Array grey = CenterPaste(3, 3, 300.0f).apply(u8, rng);
  EXPECT_EQ(grey.data<std::uint8_t>()[4], 200);
  EXPECT_EQ(grey.data<std::uint8_t>()[0], 255);  // the fill clamped to u8
  EXPECT_THROW(CenterPaste(2, 7).apply(labelled(3, 2, 1), rng), Error);
}

TEST(RandomPaste, EveryPlaceOnTheCanvasButTheLastRowAndColumn) {
  Rng rng(3);
  std::set<std::pair<std::int64_t, std::int64_t>> places;
  for (int i = 0; i < 300; ++i) {
    const Array out = RandomPaste(5, 6).apply(labelled(2, 3, 1), rng);
    std::int64_t top = -1, left = -1;
    for (std::int64_t y = 0; y < 5 && top < 0; ++y)
      for (std::int64_t x = 0; x < 6; ++x)
        if (at(out, y, x) == 0.0f && (y + 1 < 5 && at(out, y + 1, x) == 1000.0f)) {
          top = y, left = x;
          break;
        }
    ASSERT_GE(top, 0);
    EXPECT_EQ(at(out, top, left + 2), 20.0f);
    places.insert({top, left});
  }
  std::set<std::pair<std::int64_t, std::int64_t>> want;
  for (std::int64_t y = 0; y < 3; ++y)
    for (std::int64_t x = 0; x < 3; ++x) want.insert({y, x});
  EXPECT_EQ(places, want);
  EXPECT_THROW(RandomPaste(2, 6).apply(labelled(2, 3, 1), rng), Error);  // not larger
}

TEST(RandomResize, SizesFromTheRangesWithinTheAspectThreshold) {
  Rng rng(4);
  const Array in = labelled(20, 30, 1);
  const RandomResize scale({.xrange = {0.5, 1.5}, .yrange = std::array<double, 2>{0.5, 1.5}, .aspect_ratio_thres = 0.2});
  std::set<std::int64_t> widths;
  for (int i = 0; i < 200; ++i) {
    Array points = one_point(29, 19);
    const Array out = scale.apply_with_points(in, points, rng);
    const double h = static_cast<double>(out.shape()[0]), w = static_cast<double>(out.shape()[1]);
    ASSERT_TRUE(w >= 15 && w <= 45 && h >= 10 && h <= 30) << w << " x " << h;
    ASSERT_LT(std::abs(w / h - 1.5) / 1.5, 0.2 + 1e-5);
    // The resize is Resize's: the same pixels and the same move of points.
    Array again = one_point(29, 19);
    const Array want = Resize(out.shape()[0], out.shape()[1]).apply_with_points(in, again, rng);
    ASSERT_EQ(std::vector<float>(out.data<float>().begin(), out.data<float>().end()),
              std::vector<float>(want.data<float>().begin(), want.data<float>().end()));
    EXPECT_FLOAT_EQ(points.data<float>()[0], again.data<float>()[0]);
    widths.insert(out.shape()[1]);
  }
  EXPECT_GT(widths.size(), 15u);
  // Threshold 0 keeps the aspect ratio (pixels: the width drawn, the height to match);
  // the minimum is kept.
  const RandomResize keep({.xrange = {10, 40}, .ratios = false, .minimum = {0, 12}, .aspect_ratio_thres = 0});
  for (int i = 0; i < 50; ++i) {
    const Array out = keep.apply(in, rng);
    const double w = static_cast<double>(out.shape()[1]);
    // Both extents rounded from one draw: the height is max(12, 2/3 of the width) within 1.
    EXPECT_LE(std::abs(static_cast<double>(out.shape()[0]) - std::max(12.0, w * 2 / 3)), 1.0) << w;
  }
  // No draw can keep the ratio: the image passes unchanged.
  const RandomResize impossible({.xrange = {2, 2}, .yrange = std::array<double, 2>{1, 1}, .aspect_ratio_thres = 0.1});
  EXPECT_EQ(impossible.apply(in, rng).shape(), in.shape());
  EXPECT_THROW(RandomResize({.xrange = {1.2, 0.8}}), Error);
  EXPECT_THROW(RandomResize({.xrange = {0.8, 1.2}, .aspect_ratio_thres = 0.1}), Error);  // no yrange
}

// The blur by its definition: out(y, x) = sum_ij ky[i] kx[j] in(clamp(y + i), clamp(x + j)).
std::vector<double> blurred(const Array& in, int kx, int ky, double sx = 0, double sy = 0) {
  const std::vector<double> gx = gaussian_kernel(kx, sx), gy = gaussian_kernel(ky, sy);
  const std::int64_t h = in.shape()[0], w = in.shape()[1], c = in.shape()[2];
  std::vector<double> out(static_cast<std::size_t>(in.numel()));
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (std::int64_t k = 0; k < c; ++k) {
        double sum = 0;
        for (int i = 0; i < ky; ++i)
          for (int j = 0; j < kx; ++j) {
            const std::int64_t yy = std::clamp<std::int64_t>(y + i - ky / 2, 0, h - 1);
            const std::int64_t xx = std::clamp<std::int64_t>(x + j - kx / 2, 0, w - 1);
            const std::size_t from = static_cast<std::size_t>((yy * w + xx) * c + k);
            sum += gy[static_cast<std::size_t>(i)] * gx[static_cast<std::size_t>(j)] *
                   (in.dtype() == DType::u8 ? in.data<std::uint8_t>()[from] : in.data<float>()[from]);
          }
        out[static_cast<std::size_t>((y * w + x) * c + k)] = sum;
      }
  return out;
}

TEST(GaussianBlur, MatchesTheTwoDimensionalConvolutionWithReplicatedBorders) {
  Rng rng(5);
  Array f(DType::f32, Shape{6, 9, 2});
  Array u(DType::u8, Shape{6, 9, 3});
  for (float& v : f.data<float>()) v = rng.uniform(-3, 3);
  for (std::uint8_t& v : u.data<std::uint8_t>()) v = static_cast<std::uint8_t>(rng.below(256));
  struct Case {
    int kx, ky;
    double sx, sy;
  };
  for (const Case& k : {Case{1, 1, 0, 0}, Case{3, 1, 0, 0}, Case{1, 5, 0, 0}, Case{3, 5, 0, 0}, Case{7, 3, 0, 0},
                        Case{9, 11, 0, 0}, Case{5, 3, 1.3, 0.7}}) {
    const int kx = k.kx, ky = k.ky;
    SCOPED_TRACE(std::to_string(kx) + " x " + std::to_string(ky));
    const std::vector<double> want_f = blurred(f, kx, ky, k.sx, k.sy), want_u = blurred(u, kx, ky, k.sx, k.sy);
    const Array got_f = gaussian_blur(f, kx, ky, k.sx, k.sy), got_u = gaussian_blur(u, kx, ky, k.sx, k.sy);
    for (std::size_t i = 0; i < want_f.size(); ++i) ASSERT_NEAR(got_f.data<float>()[i], want_f[i], 1e-5) << i;
    for (std::size_t i = 0; i < want_u.size(); ++i)
      ASSERT_EQ(got_u.data<std::uint8_t>()[i], static_cast<int>(std::floor(want_u[i] + 0.5))) << i;
  }
}

TEST(GaussianBlur, KernelsAreOpenCvsAndTheSizesAreDrawnFromTheRange) {
  for (int size : {1, 3, 5, 7, 9, 15}) {
    const std::vector<double> k = gaussian_kernel(size);
    double sum = 0;
    for (std::size_t i = 0; i < k.size(); ++i) {
      sum += k[i];
      EXPECT_DOUBLE_EQ(k[i], k[k.size() - 1 - i]);
    }
    EXPECT_NEAR(sum, 1.0, 1e-12) << size;
  }
  // Beyond 7 the Gaussian of sigma 0.3 (4 - 1) + 0.8 = 1.7 for size 9; a sigma given is used.
  const std::vector<double> nine = gaussian_kernel(9);
  EXPECT_NEAR(nine[4] / nine[3], std::exp(1 / (2 * 1.7 * 1.7)), 1e-12);
  const std::vector<double> given = gaussian_kernel(5, 2.0);
  EXPECT_NEAR(given[2] / given[1], std::exp(1 / (2 * 2.0 * 2.0)), 1e-12);
  EXPECT_THROW(gaussian_kernel(4), Error);
  // An impulse spreads over exactly the drawn sizes: 1, 3 or 5 on both axes alike by
  // default (symmetric), every pair of them otherwise.
  Array impulse(DType::f32, Shape{11, 11, 1});
  impulse.data<float>()[5 * 11 + 5] = 1.0f;
  Rng rng(6);
  const auto spreads = [&](const GaussianBlur& blur) {
    std::set<std::pair<int, int>> sizes;
    for (int i = 0; i < 300; ++i) {
      const Array out = blur.apply(impulse, rng);
      int kx = 0, ky = 0;
      for (std::int64_t x = 0; x < 11; ++x) kx += at(out, 5, x) > 0 ? 1 : 0;
      for (std::int64_t y = 0; y < 11; ++y) ky += at(out, y, 5) > 0 ? 1 : 0;
      sizes.insert({kx, ky});
    }
    return sizes;
  };
  EXPECT_EQ(spreads(GaussianBlur()), (std::set<std::pair<int, int>>{{1, 1}, {3, 3}, {5, 5}}));
  EXPECT_EQ(spreads(GaussianBlur(3)), (std::set<std::pair<int, int>>{{1, 1}, {3, 3}, {5, 5}}));
  std::set<std::pair<int, int>> every;
  for (int a : {1, 3, 5})
    for (int b : {1, 3, 5}) every.insert({a, b});
  EXPECT_EQ(spreads(GaussianBlur({0, 3}, {0, 0}, false)), every);
  EXPECT_EQ(spreads(GaussianBlur({2, 3})), (std::set<std::pair<int, int>>{{5, 5}}));
  EXPECT_THROW(GaussianBlur({3, 3}), Error);
  EXPECT_THROW(GaussianBlur({0, 3}, {1, 0.5}), Error);
}

}  // namespace
}  // namespace vkp::dataflow
