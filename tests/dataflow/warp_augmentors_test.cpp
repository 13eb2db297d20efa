// Warps against exact cases and an independent double-precision reference: the identity
// map and a quarter turn move pixels exactly, integer shifts read each border mode's
// pixels (written out by hand), Rotation equals bilinear sampling of the rotated grid
// computed here; cutout, shortest-edge resizing and GoogLeNet's crop keep their promises;
// GaussianDeform against its formula; RotationAndCropValid's rectangle fits and is largest.
#include "dataflow/warp_augmentors.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numbers>
#include <set>

#include "core/error.h"
#include "dataflow/geometric_augmentors.h"

namespace vkp::dataflow {
namespace {

Array ramp(std::int64_t h, std::int64_t w, std::int64_t c) {
  Array a(DType::f32, Shape{h, w, c});
  for (std::size_t i = 0; i < a.data<float>().size(); ++i) a.data<float>()[i] = static_cast<float>((i * 29) % 97) / 7.0f;
  return a;
}

float at(const Array& a, std::int64_t y, std::int64_t x, std::int64_t k = 0) {
  return a.data<float>()[static_cast<std::size_t>((y * a.shape()[1] + x) * a.shape()[2] + k)];
}

TEST(WarpAffine, TheIdentityAndAQuarterTurnMovePixelsExactly) {
  const Array in = ramp(5, 5, 2);
  const Array same = warp_affine(in, {1, 0, 0, 0, 1, 0}, 5, 5);
  EXPECT_EQ(std::vector<float>(same.data<float>().begin(), same.data<float>().end()),
            std::vector<float>(in.data<float>().begin(), in.data<float>().end()));
  // out(y, x) = in(row x, column 4 - y)
  const Array turned = warp_affine(in, {0, -1, 4, 1, 0, 0}, 5, 5);
  for (std::int64_t y = 0; y < 5; ++y)
    for (std::int64_t x = 0; x < 5; ++x)
      for (std::int64_t k = 0; k < 2; ++k) EXPECT_EQ(at(turned, y, x, k), at(in, x, 4 - y, k)) << y << "," << x;
}

TEST(WarpAffine, IntegerShiftsReadEachBorderMode) {
  // One row of 5: a b c d e. Shifted so that out(x) = in(x - 3): columns -3 .. 1.
  Array row(DType::f32, Shape{1, 5, 1});
  for (int i = 0; i < 5; ++i) row.data<float>()[static_cast<std::size_t>(i)] = static_cast<float>(10 + i);
  const auto shifted = [&](Border b) {
    const Array out = warp_affine(row, {1, 0, -3, 0, 1, 0}, 1, 5, b, -1.0f);
    return std::vector<float>(out.data<float>().begin(), out.data<float>().end());
  };
  EXPECT_EQ(shifted(Border::constant), (std::vector<float>{-1, -1, -1, 10, 11}));
  EXPECT_EQ(shifted(Border::replicate), (std::vector<float>{10, 10, 10, 10, 11}));
  EXPECT_EQ(shifted(Border::reflect), (std::vector<float>{13, 12, 11, 10, 11}));  // dcb|abcde
}

// Bilinear sample of `in` at (u, v), 0 outside: the reference, in double.
double sample(const Array& in, double u, double v, std::int64_t k) {
  const std::int64_t h = in.shape()[0], w = in.shape()[1];
  const double fu = std::floor(u), fv = std::floor(v);
  double sum = 0;
  for (int j = 0; j < 2; ++j)
    for (int i = 0; i < 2; ++i) {
      const auto x = static_cast<std::int64_t>(fu) + i, y = static_cast<std::int64_t>(fv) + j;
      const double weight = (i ? u - fu : 1 - (u - fu)) * (j ? v - fv : 1 - (v - fv));
      if (x >= 0 && x < w && y >= 0 && y < h) sum += weight * at(in, y, x, k);
    }
  return sum;
}

TEST(Rotation, EqualsSamplingTheGridRotatedCounterClockwise) {
  const Array in = ramp(9, 12, 3);
  Rng rng(21), same(21);
  const Array out = Rotation(30).apply(in, rng);
  const double a = same.uniform(-30.0f, 30.0f) * std::numbers::pi / 180;
  const double cx = 5.5, cy = 4.0;
  double worst = 0;
  for (std::int64_t y = 0; y < 9; ++y)
    for (std::int64_t x = 0; x < 12; ++x) {
      // The output pixel came from the input point rotated back (clockwise on screen).
      const double dx = static_cast<double>(x) - cx, dy = static_cast<double>(y) - cy;
      const double u = cx + dx * std::cos(a) - dy * std::sin(a), v = cy + dx * std::sin(a) + dy * std::cos(a);
      for (std::int64_t k = 0; k < 3; ++k) worst = std::max(worst, std::abs(sample(in, u, v, k) - at(out, y, x, k)));
    }
  EXPECT_LT(worst, 1e-4);
  EXPECT_NE(a, 0.0);
}

TEST(Affine, WithNothingToDrawIsTheIdentity) {
  const Array in = ramp(6, 7, 1);
  Rng rng(3);
  const Array out = Affine({}).apply(in, rng);
  for (std::size_t i = 0; i < in.data<float>().size(); ++i) EXPECT_NEAR(out.data<float>()[i], in.data<float>()[i], 1e-5);
}

TEST(RandomCutout, FillsOneRectangleAndLeavesTheRest) {
  Array in(DType::u8, Shape{16, 16, 1});
  for (auto& v : in.data<std::uint8_t>()) v = 200;
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    Rng rng(seed);
    const Array out = RandomCutout(3, 6, 7).apply(in, rng);
    int filled = 0;
    for (std::uint8_t v : out.data<std::uint8_t>()) {
      EXPECT_TRUE(v == 200 || v == 7);
      filled += v == 7;
    }
    EXPECT_GE(filled, 1) << seed;
    EXPECT_LE(filled, 36) << seed;
  }
}

// tensorpack's h_range and w_range: a 2 x 5 rectangle wherever it lies wholly inside,
// and never taller than 2 or wider than 5 where it crosses the border.
TEST(RandomCutout, DrawsHeightAndWidthFromTheirOwnRanges) {
  Array in(DType::u8, Shape{32, 32, 1});
  for (auto& v : in.data<std::uint8_t>()) v = 200;
  int inside = 0;
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    Rng rng(seed);
    const Array out = RandomCutout({2, 2}, {5, 5}, 7).apply(in, rng);
    std::int64_t top = 32, bottom = -1, left = 32, right = -1, filled = 0;
    for (std::int64_t i = 0; i < 32 * 32; ++i)
      if (out.data<std::uint8_t>()[static_cast<std::size_t>(i)] == 7) {
        top = std::min(top, i / 32), bottom = std::max(bottom, i / 32);
        left = std::min(left, i % 32), right = std::max(right, i % 32), ++filled;
      }
    ASSERT_GE(filled, 1) << seed;
    EXPECT_EQ(filled, (bottom - top + 1) * (right - left + 1)) << "one rectangle, seed " << seed;
    EXPECT_LE(bottom - top + 1, 2) << seed;
    EXPECT_LE(right - left + 1, 5) << seed;
    inside += filled == 10;
  }
  EXPECT_GE(inside, 20) << "most draws lie wholly inside a 32 x 32 image";
  EXPECT_THROW(RandomCutout({3, 2}, {1, 1}), Error);
}

TEST(ResizeShortestEdge, KeepsTheAspectRatio) {
  Rng rng(1);
  EXPECT_EQ(ResizeShortestEdge(10).apply(ramp(20, 35, 3), rng).shape().dims(), (std::vector<std::int64_t>{10, 18, 3}));
  EXPECT_EQ(ResizeShortestEdge(10).apply(ramp(35, 20, 1), rng).shape().dims(), (std::vector<std::int64_t>{18, 10, 1}));
}

TEST(GoogleNetRandomCropAndResize, CropsAndResizesReproducibly) {
  const Array in = ramp(40, 50, 3);
  Rng a(5), b(5);
  const Array x = GoogleNetRandomCropAndResize(16, 16).apply(in, a), y = GoogleNetRandomCropAndResize(16, 16).apply(in, b);
  EXPECT_EQ(x.shape().dims(), (std::vector<std::int64_t>{16, 16, 3}));
  EXPECT_EQ(std::vector<float>(x.data<float>().begin(), x.data<float>().end()),
            std::vector<float>(y.data<float>().begin(), y.data<float>().end()));
  // Whole area at aspect 1 of a square image: the whole image, resized.
  const Array square = ramp(20, 20, 1);
  Rng c(9), d(9);
  const Array whole = GoogleNetRandomCropAndResize(8, 8, {1, 1}, {1, 1}).apply(square, c);
  const Array resized = Resize(8, 8).apply(square, d);
  EXPECT_EQ(std::vector<float>(whole.data<float>().begin(), whole.data<float>().end()),
            std::vector<float>(resized.data<float>().begin(), resized.data<float>().end()));
}

// The rectangle fits the turned one: its corners, turned back, lie inside w x h (within
// the half pixel of rounding each side); and it is largest: 4% larger, a corner leaves.
TEST(RotationAndCropValid, TheLargestRectangleFitsAndIsLargest) {
  EXPECT_EQ(largest_rotated_rect(100, 100, 0), (std::array<std::int64_t, 2>{100, 100}));
  EXPECT_EQ(largest_rotated_rect(100, 100, 45), (std::array<std::int64_t, 2>{71, 71}));  // 100 / sqrt(2)
  EXPECT_EQ(largest_rotated_rect(100, 50, 90), (std::array<std::int64_t, 2>{50, 100}));
  const auto inside = [](double rw, double rh, double w, double h, double deg, double slack) {
    const double a = deg * std::numbers::pi / 180;
    for (double sx : {-0.5, 0.5})
      for (double sy : {-0.5, 0.5}) {
        const double x = sx * rw, y = sy * rh;
        const double u = std::cos(a) * x + std::sin(a) * y, v = -std::sin(a) * x + std::cos(a) * y;
        if (std::abs(u) > w / 2 + slack || std::abs(v) > h / 2 + slack) return false;
      }
    return true;
  };
  for (auto [w, h] : {std::pair<std::int64_t, std::int64_t>{100, 100}, {120, 45}, {30, 90}})
    for (double deg : {-170.0, -95.0, -30.0, 5.0, 12.5, 44.0, 60.0, 89.0, 135.0}) {
      const std::array<std::int64_t, 2> r = largest_rotated_rect(w, h, deg);
      const double rw = static_cast<double>(r[0]), rh = static_cast<double>(r[1]);
      EXPECT_TRUE(inside(rw, rh, double(w), double(h), deg, 1.0)) << w << "x" << h << " at " << deg;
      EXPECT_FALSE(inside(rw * 1.04, rh * 1.04, double(w), double(h), deg, 0.0)) << w << "x" << h << " at " << deg;
    }
}

TEST(RotationAndCropValid, CropsNoBorderAndMovesTheCentreToTheCentre) {
  Array ones(DType::f32, Shape{40, 60, 2});
  for (float& v : ones.data<float>()) v = 1.0f;
  Rng rng(3);
  const RotationAndCropValid turn(30);
  for (int i = 0; i < 30; ++i) {
    Array points(DType::f32, Shape{1, 2});
    points.data<float>()[0] = 29.5f, points.data<float>()[1] = 19.5f;  // the image's centre
    const Array out = turn.apply_with_points(ones, points, rng);
    const std::int64_t h = out.shape()[0], w = out.shape()[1];
    ASSERT_TRUE(h >= 1 && h <= 40 && w >= 1 && w <= 60);
    // Inside its outermost ring of pixels (which samples within a pixel of the turned
    // image's edge and blends with the border there, as tensorpack's does), the crop
    // holds the image only.
    float lowest = 1;
    for (std::int64_t y = 1; y + 1 < h; ++y)
      for (std::int64_t x = 1; x + 1 < w; ++x) lowest = std::min(lowest, at(out, y, x, 1));
    EXPECT_GT(lowest, 0.999f) << "the crop reaches the constant border: " << w << " x " << h;
    EXPECT_NEAR(points.data<float>()[0], (static_cast<double>(w) - 1) / 2, 0.51);
    EXPECT_NEAR(points.data<float>()[1], (static_cast<double>(h) - 1) / 2, 0.51);
  }
  // Steps of 90 degrees: the image turned whole, cut to fit its own frame.
  const RotationAndCropValid quarter(180, 90);
  std::set<std::vector<std::int64_t>> shapes;
  for (int i = 0; i < 40; ++i) shapes.insert(quarter.apply(ramp(8, 6, 1), rng).shape().dims());
  EXPECT_EQ(shapes, (std::set<std::vector<std::int64_t>>{{8, 6, 1}, {6, 6, 1}}));
  EXPECT_THROW(RotationAndCropValid(90, 45), Error);  // a step asks max_deg 180
}

// GaussianDeform against its formula evaluated here in double with the same draws (2 K
// uniforms, dy then dx per anchor, from a copy of the Rng), including the clamp at the
// border; randrange 0 is the identity.
TEST(GaussianDeform, SamplesTheImageAtTheDisplacedGrid) {
  const std::vector<std::array<double, 2>> anchors = {{0.2, 0.3}, {0.7, 0.8}, {0.5, 0.1}};
  const std::int64_t h = 12, w = 15, c = 2;
  const double sigma = 0.3, range = 3.0;
  const Array in = ramp(h, w, c);
  Rng rng(7), copy(7);
  const Array out = GaussianDeform(anchors, h, w, sigma, range).apply(in, rng);
  std::vector<double> v;
  for (int i = 0; i < 6; ++i) v.push_back((static_cast<double>(copy.uniform()) - 0.5) * 2 * range);
  double moved = 0;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      double sy = double(y), sx = double(x);
      for (std::size_t k = 0; k < 3; ++k) {
        const double dy = double(y) / h - anchors[k][0], dx = double(x) / w - anchors[k][1];
        const double g = std::exp(-(dx * dx + dy * dy) / sigma);
        sy += g * v[2 * k], sx += g * v[2 * k + 1];
      }
      moved = std::max(moved, std::hypot(sy - y, sx - x));
      sy = std::clamp(sy, 0.0, double(h - 1)), sx = std::clamp(sx, 0.0, double(w - 1));
      const auto y0 = std::int64_t(std::floor(sy)), x0 = std::int64_t(std::floor(sx));
      const std::int64_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
      const double fy = sy - double(y0), fx = sx - double(x0);
      for (std::int64_t k = 0; k < c; ++k) {
        const double want = at(in, y0, x0, k) * (1 - fy) * (1 - fx) + at(in, y0, x1, k) * (1 - fy) * fx +
                            at(in, y1, x0, k) * fy * (1 - fx) + at(in, y1, x1, k) * fy * fx;
        ASSERT_NEAR(at(out, y, x, k), want, 1e-4) << y << "," << x << "," << k;
      }
    }
  EXPECT_GT(moved, 0.5) << "the draws moved nothing: the test would not see a wrong map";
  Rng again(1);
  const Array same = GaussianDeform(anchors, h, w, sigma, 0.0).apply(in, again);
  EXPECT_EQ(std::vector<float>(same.data<float>().begin(), same.data<float>().end()),
            std::vector<float>(in.data<float>().begin(), in.data<float>().end()));
  EXPECT_THROW(GaussianDeform(anchors, h, w).apply(ramp(h + 1, w, c), again), Error);
  Array points(DType::f32, Shape{1, 2});
  EXPECT_THROW(GaussianDeform(anchors, h, w).apply_with_points(in, points, again), Error);
}

}  // namespace
}  // namespace vkp::dataflow
