// Image augmentors and AugmentImageComponent.
#include <gtest/gtest.h>

#include <algorithm>

#include <cmath>
#include <map>
#include <numeric>
#include <set>

#include "test_flows.h"
#include "dataflow/augment_image_component.h"
#include "dataflow/augmentor_list.h"
#include "dataflow/geometric_augmentors.h"
#include "dataflow/photometric_augmentors.h"
#include "dataflow/warp_augmentors.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// [h, w, c] i32 image whose element (y, x, k) is 100 * (y * w + x) + k + 1 (never 0).
Array numbered(std::int64_t h, std::int64_t w, std::int64_t c) {
  Array a(DType::i32, Shape{h, w, c});
  std::span<std::int32_t> p = a.data<std::int32_t>();
  for (std::int64_t i = 0; i < h * w * c; ++i) p[static_cast<std::size_t>(i)] = static_cast<std::int32_t>(100 * (i / c) + i % c + 1);
  return a;
}

std::int32_t at(const Array& a, std::int64_t y, std::int64_t x, std::int64_t k) {
  const Shape& s = a.shape();
  return a.data<std::int32_t>()[static_cast<std::size_t>((y * s[1] + x) * s[2] + k)];
}

Array random_f32(Shape shape, std::uint64_t seed, float lo = 0, float hi = 1) {
  Array a(DType::f32, std::move(shape));
  Rng rng(seed);
  for (float& v : a.data<float>()) v = rng.uniform(lo, hi);
  return a;
}

template <class T>
std::vector<T> values(const Array& a) {
  return std::vector<T>(a.data<T>().begin(), a.data<T>().end());
}

TEST(Flip, MirrorsHorizontallyAndVerticallyKeepingChannels) {
  Rng rng(0);
  const Array image = numbered(3, 4, 2);
  const Array h = Flip(FlipAxis::horizontal, 1.0).apply(image, rng);
  const Array v = Flip(FlipAxis::vertical, 1.0).apply(image, rng);
  for (std::int64_t y = 0; y < 3; ++y)
    for (std::int64_t x = 0; x < 4; ++x)
      for (std::int64_t k = 0; k < 2; ++k) {
        EXPECT_EQ(at(h, y, x, k), at(image, y, 3 - x, k));
        EXPECT_EQ(at(v, y, x, k), at(image, 2 - y, x, k));
      }
  EXPECT_EQ(values<std::int32_t>(Flip(FlipAxis::horizontal, 0.0).apply(image, rng)), values<std::int32_t>(image));
}

TEST(Flip, FlipsAboutHalfTheTimeAndWorksOnRank2U8) {
  Array image = Array::from<std::uint8_t>(Shape{1, 3}, std::vector<std::uint8_t>{1, 2, 3});
  const Flip flip(FlipAxis::horizontal);
  Rng rng(3);
  int flipped = 0;
  for (int i = 0; i < 1000; ++i) flipped += flip.apply(image, rng).data<std::uint8_t>()[0] == 3;
  EXPECT_GT(flipped, 430);
  EXPECT_LT(flipped, 570);
}

TEST(RandomCrop, TakesEveryWindowPositionAndOnlyThose) {
  const Array image = numbered(5, 6, 1);
  const RandomCrop crop(3, 2);
  Rng rng(1);
  std::set<std::pair<std::int64_t, std::int64_t>> origins;
  for (int i = 0; i < 500; ++i) {
    const Array out = crop.apply(image, rng);
    ASSERT_EQ(out.shape(), (Shape{3, 2, 1}));
    const std::int64_t origin = (at(out, 0, 0, 0) - 1) / 100, top = origin / 6, left = origin % 6;
    for (std::int64_t y = 0; y < 3; ++y)
      for (std::int64_t x = 0; x < 2; ++x) EXPECT_EQ(at(out, y, x, 0), at(image, top + y, left + x, 0));
    origins.insert({top, left});
  }
  EXPECT_EQ(origins.size(), 3u * 5u);
}

TEST(RandomCrop, AWindowLargerThanTheImageIsAnError) {
  Rng rng(0);
  const std::string message =
      error_message([&] { RandomCrop(8, 8).apply(numbered(5, 6, 1), rng); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("RandomCrop: cannot take a 8 x 8 window from image i32[5, 6, 1]"), std::string::npos) << message;
}

TEST(CenterCrop, TakesTheMiddle) {
  Rng rng(0);
  const Array out = CenterCrop(3, 2).apply(numbered(5, 5, 1), rng);
  EXPECT_EQ(at(out, 0, 0, 0), at(numbered(5, 5, 1), 1, 1, 0));
  EXPECT_EQ(at(out, 2, 1, 0), at(numbered(5, 5, 1), 3, 2, 0));
}

// Shift by building the padded image, then cropping at the offsets the Rng gives.
Array shift_reference(const Array& image, std::int64_t pad, std::int64_t h, std::int64_t w, std::int32_t fill, Rng rng) {
  const Shape& s = image.shape();
  const std::int64_t ph = s[0] + 2 * pad, pw = s[1] + 2 * pad;
  const auto top = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(ph - h + 1)));
  const auto left = static_cast<std::int64_t>(rng.below(static_cast<std::uint64_t>(pw - w + 1)));
  Array out(DType::i32, Shape{h, w, s[2]});
  std::span<std::int32_t> o = out.data<std::int32_t>();
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (std::int64_t k = 0; k < s[2]; ++k) {
        const std::int64_t sy = top + y - pad, sx = left + x - pad;
        const bool inside = sy >= 0 && sy < s[0] && sx >= 0 && sx < s[1];
        o[static_cast<std::size_t>((y * w + x) * s[2] + k)] = inside ? at(image, sy, sx, k) : fill;
      }
  return out;
}

TEST(Shift, MatchesPaddingThenCroppingForEveryOffset) {
  const Array image = numbered(7, 5, 3);
  for (const auto& [pad, h, w, fill] : {std::tuple{2, 7, 5, 0}, {1, 7, 5, 9}, {4, 6, 6, 0}, {1, 3, 4, 9}, {3, 9, 9, -2}, {9, 7, 5, 0}}) {
    const Shift shift(pad, h, w, static_cast<float>(fill));
    Rng rng(static_cast<std::uint64_t>(pad));
    for (int i = 0; i < 200; ++i) {
      const Array want = shift_reference(image, pad, h, w, fill, rng);
      EXPECT_EQ(values<std::int32_t>(shift.apply(image, rng)), values<std::int32_t>(want)) << pad << " " << i;
    }
  }
}

// `image` (i32) converted to another dtype, element by element.
Array converted(const Array& image, DType dtype) {
  Array out(dtype, image.shape());
  std::span<const std::int32_t> in = image.data<std::int32_t>();
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (dtype == DType::f32) out.data<float>()[i] = static_cast<float>(in[i]);
    if (dtype == DType::u8) out.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(in[i] % 251);
  }
  return out;
}

TEST(Shift, F32AndU8ImagesShiftLikeI32Ones) {
  // One and three channels, in place (same size) and not; the f32 fill is not zero.
  for (const auto& [c, h, w] : {std::tuple{1, 7, 5}, {3, 7, 5}, {1, 6, 6}}) {
    const Array image = numbered(7, 5, c);
    for (DType dtype : {DType::f32, DType::u8}) {
      const float fill = dtype == DType::f32 ? -1.5f : 0.0f;
      const Shift shift(3, h, w, fill);
      Rng rng(5);
      for (int i = 0; i < 100; ++i) {
        // The reference takes a copy of rng: both draw the same offsets.
        const Array want = converted(shift_reference(image, 3, h, w, 0, rng), dtype);
        const Array got = shift.apply(converted(image, dtype), rng);
        ASSERT_EQ(got.shape(), want.shape());
        // numbered() holds no 0: the reference's zeros are the fill, `fill` here.
        for (std::int64_t k = 0; k < got.numel(); ++k) {
          const auto kk = static_cast<std::size_t>(k);
          if (dtype == DType::f32) {
            const float v = want.data<float>()[kk];
            EXPECT_EQ(got.data<float>()[kk], v == 0 ? fill : v) << c << " " << i << " " << k;
          } else {
            EXPECT_EQ(got.data<std::uint8_t>()[kk], want.data<std::uint8_t>()[kk]) << c << " " << i << " " << k;
          }
        }
      }
    }
  }
}

TEST(Flip, F32AndU8ImagesMirrorElementByElement) {
  for (const auto& [c, w] : {std::pair<std::int64_t, std::int64_t>{1, 7}, {1, 19}, {1, 64}, {3, 7}, {3, 19}}) {
    const Array image = numbered(4, w, c);
    Array mirrored(DType::i32, image.shape());
    for (std::int64_t y = 0; y < 4; ++y)
      for (std::int64_t x = 0; x < w; ++x)
        for (std::int64_t k = 0; k < c; ++k)
          mirrored.data<std::int32_t>()[static_cast<std::size_t>((y * w + x) * c + k)] = at(image, y, w - 1 - x, k);
    for (DType dtype : {DType::f32, DType::u8}) {
      Rng rng(0);
      const Array got = Flip(FlipAxis::horizontal, 1.0).apply(converted(image, dtype), rng);
      const Array want = converted(mirrored, dtype);
      EXPECT_EQ(std::vector<std::byte>(got.bytes().begin(), got.bytes().end()),
                std::vector<std::byte>(want.bytes().begin(), want.bytes().end()))
          << c << " channels, width " << w << ", " << to_string(dtype);
    }
  }
}

TEST(Shift, FarShiftsGiveOnlyTheFill) {
  Rng rng(0);
  // pad 10 around a 2 x 2 image: most 2 x 2 windows miss it.
  int empty = 0;
  for (int i = 0; i < 100; ++i) {
    const Array out = Shift(10, 2, 2).apply(numbered(2, 2, 1), rng);
    empty += values<std::int32_t>(out) == std::vector<std::int32_t>(4, 0);
  }
  EXPECT_GT(empty, 50);
}

TEST(Resize, BilinearAtPixelCentres) {
  Rng rng(0);
  const Array row = Array::from<float>(Shape{1, 2, 1}, std::vector<float>{0, 10});
  const Array out = Resize(1, 4).apply(row, rng);
  EXPECT_EQ(values<float>(out), (std::vector<float>{0, 2.5f, 7.5f, 10}));
  const Array image = random_f32(Shape{5, 7, 3}, 4);
  EXPECT_EQ(values<float>(Resize(5, 7).apply(image, rng)), values<float>(image));
  const Array down = Resize(2, 2).apply(random_f32(Shape{4, 4, 1}, 5), rng);
  EXPECT_EQ(down.shape(), (Shape{2, 2, 1}));
}

TEST(Resize, U8IsRoundedAndConstantImagesStayConstant) {
  Rng rng(0);
  Array flat(DType::u8, Shape{3, 3});
  for (std::uint8_t& v : flat.data<std::uint8_t>()) v = 77;
  const Array big = Resize(7, 5).apply(flat, rng);
  EXPECT_EQ(big.shape(), (Shape{7, 5}));
  for (std::uint8_t v : big.data<std::uint8_t>()) EXPECT_EQ(v, 77);
  const Array pair = Array::from<std::uint8_t>(Shape{1, 2}, std::vector<std::uint8_t>{0, 3});
  EXPECT_EQ(values<std::uint8_t>(Resize(1, 4).apply(pair, rng)), (std::vector<std::uint8_t>{0, 1, 2, 3}));
}

TEST(Brightness, ShiftsAllPixelsByOneDrawAndClampsU8) {
  Rng rng(2);
  const Array image = random_f32(Shape{4, 4, 3}, 1);
  const Array out = Brightness(0.5f).apply(image, rng);
  const float d = out.data<float>()[0] - image.data<float>()[0];
  EXPECT_LE(std::abs(d), 0.5f);
  for (std::size_t i = 0; i < 48; ++i) EXPECT_NEAR(out.data<float>()[i] - image.data<float>()[i], d, 1e-6f);
  Array bright(DType::u8, Shape{2, 2, 1});
  for (std::uint8_t& v : bright.data<std::uint8_t>()) v = 250;
  bool clamped = false;
  for (int i = 0; i < 20; ++i) clamped |= Brightness(100).apply(bright, rng).data<std::uint8_t>()[0] == 255;
  EXPECT_TRUE(clamped);
}

TEST(Transpose, SwapsRowsAndColumnsAndPoints) {
  Rng rng(0);
  // [2, 3, 2]: pixel (y, x) holds (10 y + x, -(10 y + x)).
  std::vector<float> v;
  for (int y = 0; y < 2; ++y)
    for (int x = 0; x < 3; ++x) v.insert(v.end(), {float(10 * y + x), -float(10 * y + x)});
  const Array image = Array::from(Shape{2, 3, 2}, v);
  Array points = Array::from(Shape{1, 2}, std::vector<float>{2.0f, 1.0f});
  const Array out = Transpose(1.0).apply_with_points(image, points, rng);
  ASSERT_EQ(out.shape(), (Shape{3, 2, 2}));
  for (int y = 0; y < 3; ++y)
    for (int x = 0; x < 2; ++x) EXPECT_EQ(out.data<float>()[static_cast<std::size_t>((y * 2 + x) * 2)], float(10 * x + y));
  EXPECT_EQ(values<float>(points), (std::vector<float>{1.0f, 2.0f}));
  EXPECT_EQ(values<float>(Transpose(0.0).apply(image, rng)), v);
}

TEST(BrightnessScale, ScalesAllPixelsByOneDraw) {
  Rng rng(5);
  const Array image = random_f32(Shape{3, 4, 3}, 2);
  const Array out = BrightnessScale(0.5f, 1.5f).apply(image, rng);
  const float factor = out.data<float>()[0] / image.data<float>()[0];
  EXPECT_GE(factor, 0.5f);
  EXPECT_LT(factor, 1.5f);
  for (std::size_t i = 0; i < 36; ++i) EXPECT_NEAR(out.data<float>()[i], image.data<float>()[i] * factor, 1e-5f);
  EXPECT_THROW(BrightnessScale(2, 1), Error);
}

// tensorpack's lookup table: 255 (x / 255)^(1 / (1 + g)); with low = high the draw is g.
TEST(Gamma, RaisesToOneOverOnePlusG) {
  Rng rng(6);
  const Array image = Array::from<std::uint8_t>(Shape{1, 4}, std::vector<std::uint8_t>{0, 64, 128, 255});
  const std::vector<std::uint8_t> got = values<std::uint8_t>(Gamma(0.25f, 0.25f).apply(image, rng));
  for (std::size_t i = 0; i < 4; ++i) {
    const double x = image.data<std::uint8_t>()[i];
    EXPECT_EQ(got[i], static_cast<std::uint8_t>(std::lround(255 * std::pow(x / 255, 1 / 1.25)))) << x;
  }
  EXPECT_THROW(Gamma(-1.0f, 0.0f), Error);
}

TEST(ClipAndToUint8, ClampThenRound) {
  Rng rng(0);
  const Array image = Array::from(Shape{1, 5}, std::vector<float>{-3.0f, 0.4f, 127.5f, 254.6f, 300.0f});
  EXPECT_EQ(values<float>(Clip(0, 200).apply(image, rng)), (std::vector<float>{0, 0.4f, 127.5f, 200, 200}));
  const Array u8 = ToUint8().apply(image, rng);
  EXPECT_EQ(u8.dtype(), DType::u8);
  EXPECT_EQ(values<std::uint8_t>(u8), (std::vector<std::uint8_t>{0, 0, 128, 255, 255}));
}

TEST(MinMaxNormalize, MapsTheRangeLinearlyOverTheImageOrEachChannel) {
  Rng rng(0);
  const Array image = Array::from(Shape{1, 3, 2}, std::vector<float>{1, 10, 3, 10, 5, 10});
  EXPECT_EQ(values<float>(MinMaxNormalize(0, 1).apply(image, rng)),
            (std::vector<float>{0, 1, 2.0f / 9, 1, 4.0f / 9, 1}));
  // Per channel: the first runs 1..5, the second is constant and becomes `low`.
  EXPECT_EQ(values<float>(MinMaxNormalize(-1, 1, false).apply(image, rng)),
            (std::vector<float>{-1, -1, 0, -1, 1, -1}));
}

TEST(SaltPepperNoise, TurnsTheAskedShareWhiteAndBlack) {
  Rng rng(7);
  Array image(DType::u8, Shape{100, 100, 1});
  for (std::uint8_t& v : image.data<std::uint8_t>()) v = 100;
  const std::vector<std::uint8_t> got = values<std::uint8_t>(SaltPepperNoise(0.1f, 0.2f).apply(image, rng));
  const double white = static_cast<double>(std::count(got.begin(), got.end(), 255)) / 1e4;
  const double black = static_cast<double>(std::count(got.begin(), got.end(), 0)) / 1e4;
  EXPECT_NEAR(white, 0.1, 0.015);  // about five binomial standard deviations
  EXPECT_NEAR(black, 0.2, 0.02);
  EXPECT_EQ(std::count(got.begin(), got.end(), 100) + std::count(got.begin(), got.end(), 255) +
                std::count(got.begin(), got.end(), 0),
            10000);
}

TEST(Grayscale, WeighsRedGreenAndBlue) {
  Rng rng(0);
  const Array image = Array::from(Shape{1, 2, 3}, std::vector<float>{100, 50, 20, 0, 0, 255});
  EXPECT_EQ(image.shape(), (Shape{1, 2, 3}));
  const Array grey = Grayscale().apply(image, rng);
  EXPECT_EQ(grey.shape(), (Shape{1, 2, 1}));
  EXPECT_NEAR(grey.data<float>()[0], 0.299 * 100 + 0.587 * 50 + 0.114 * 20, 1e-3);
  EXPECT_NEAR(grey.data<float>()[1], 0.114 * 255, 1e-3);
  const Array bgr = Grayscale(/*keep_shape=*/true, /*rgb=*/false).apply(image, rng);  // the first channel read as blue
  EXPECT_EQ(bgr.shape(), (Shape{1, 2, 3}));
  for (std::size_t k = 0; k < 3; ++k) EXPECT_NEAR(bgr.data<float>()[k], 0.114 * 100 + 0.587 * 50 + 0.299 * 20, 1e-3);
  EXPECT_THROW(Grayscale().apply(Array(DType::f32, Shape{2, 2, 1}), rng), Error);
}

TEST(Contrast, KeepsEachChannelsMean) {
  Rng rng(3);
  const Array image = random_f32(Shape{6, 5, 2}, 8);
  const Array out = Contrast(0.5f, 1.5f).apply(image, rng);
  for (std::size_t k = 0; k < 2; ++k) {
    double before = 0, after = 0;
    for (std::size_t i = k; i < 60; i += 2) {
      before += image.data<float>()[i];
      after += out.data<float>()[i];
    }
    EXPECT_NEAR(before, after, 1e-4);
  }
  EXPECT_NE(values<float>(out), values<float>(image));
}

TEST(MeanVarianceNormalize, GivesZeroMeanUnitVarianceAsF32) {
  Rng rng(0);
  Array image(DType::u8, Shape{8, 8, 3});
  Rng fill(9);
  for (std::uint8_t& v : image.data<std::uint8_t>()) v = static_cast<std::uint8_t>(fill.below(256));
  const Array out = MeanVarianceNormalize().apply(image, rng);
  EXPECT_EQ(out.dtype(), DType::f32);
  const std::vector<float> v = values<float>(out);
  const double mean = std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
  double var = 0;
  for (float x : v) var += (x - mean) * (x - mean);
  EXPECT_NEAR(mean, 0, 1e-5);
  EXPECT_NEAR(var / static_cast<double>(v.size()), 1, 1e-4);
  Array flat(DType::f32, Shape{2, 2});
  const Array normalised_flat = MeanVarianceNormalize(false).apply(flat, rng);
  for (float x : normalised_flat.data<float>()) EXPECT_EQ(x, 0.0f);
}

TEST(GaussianNoise, HasTheAskedSpread) {
  Rng rng(4);
  const Array zero(DType::f32, Shape{64, 64, 1});
  const std::vector<float> v = values<float>(GaussianNoise(0.25f).apply(zero, rng));
  double sum = 0, sq = 0;
  for (float x : v) {
    sum += x;
    sq += x * x;
  }
  const double n = static_cast<double>(v.size());
  EXPECT_NEAR(sum / n, 0, 0.02);
  EXPECT_NEAR(std::sqrt(sq / n), 0.25, 0.01);
}

TEST(ToFloat, ScalesAndNormalisesPerChannel) {
  Rng rng(0);
  const Array image = Array::from<std::uint8_t>(Shape{1, 2, 2}, std::vector<std::uint8_t>{0, 255, 51, 102});
  const std::vector<float> unit = values<float>(ToFloat().apply(image, rng));
  const std::vector<float> want{0, 1, 0.2f, 0.4f};
  for (std::size_t i = 0; i < 4; ++i) EXPECT_NEAR(unit[i], want[i], 1e-6f);
  const std::vector<float> out = values<float>(ToFloat(1.0f, {10, 20}, {2, 4}).apply(image, rng));
  EXPECT_EQ(out, (std::vector<float>{-5, 58.75f, 20.5f, 20.5f}));
  EXPECT_THROW(ToFloat(1.0f, {1, 2, 3}).apply(image, rng), Error);
}

TEST(AugmentorList, AppliesInOrderAndRejectsNonImages) {
  Rng rng(0);
  const AugmentorList list({std::make_shared<CenterCrop>(2, 2), std::make_shared<Flip>(FlipAxis::horizontal, 1.0)});
  const Array out = list.apply(numbered(4, 4, 1), rng);
  EXPECT_EQ(at(out, 0, 0, 0), at(numbered(4, 4, 1), 1, 2, 0));
  const std::string message =
      error_message([&] { list.apply(Array(DType::i32, Shape{4}), rng); }, ErrorCode::invalid_argument);
  EXPECT_NE(message.find("CenterCrop: expects an image [H, W, C] or [H, W], got i32[4]"), std::string::npos) << message;
}

TEST(RandomApplyAug, AppliesWithTheGivenProbability) {
  Rng rng(6);
  const RandomApplyAug never(std::make_shared<Flip>(FlipAxis::vertical, 1.0), 0.0);
  const RandomApplyAug half(std::make_shared<Flip>(FlipAxis::vertical, 1.0), 0.5);
  const Array image = numbered(2, 1, 1);
  EXPECT_EQ(values<std::int32_t>(never.apply(image, rng)), values<std::int32_t>(image));
  int applied = 0;
  for (int i = 0; i < 1000; ++i) applied += at(half.apply(image, rng), 0, 0, 0) != at(image, 0, 0, 0);
  EXPECT_GT(applied, 430);
  EXPECT_LT(applied, 570);
}

TEST(RandomChooseAug, PicksByWeight) {
  Rng rng(7);
  const RandomChooseAug choose({std::make_shared<Flip>(FlipAxis::vertical, 1.0), std::make_shared<Flip>(FlipAxis::horizontal, 1.0)},
                               {0, 1});
  const Array image = numbered(2, 2, 1);
  for (int i = 0; i < 50; ++i) EXPECT_EQ(at(choose.apply(image, rng), 0, 0, 0), at(image, 0, 1, 0));
}

// Three affine steps, x + 1, 2 x and 3 x + 7, give six different results from x = 0,
// one per order (13, 15, 20, 10, 8, 16 for abc, cba, acb, bac, bca, cab): every order
// appears, about equally often (1/6 each).
TEST(RandomOrderAug, EveryOrderEquallyOften) {
  const RandomOrderAug any_order({std::make_shared<ToFloat>(1.0f, std::vector<float>{-1.0f}),
                                  std::make_shared<ToFloat>(2.0f), std::make_shared<ToFloat>(3.0f, std::vector<float>{-7.0f})});
  const Array x(DType::f32, Shape{1, 1, 1});
  Rng rng(8);
  std::map<float, int> seen;
  for (int i = 0; i < 3000; ++i) ++seen[any_order.apply(x, rng).data<float>()[0]];
  ASSERT_EQ(seen.size(), 6u);
  for (float v : {13.0f, 15.0f, 20.0f, 10.0f, 8.0f, 16.0f}) {
    EXPECT_GT(seen[v], 420) << v;
    EXPECT_LT(seen[v], 580) << v;
  }
  Array points(DType::f32, Shape{1, 2});
  EXPECT_EQ(any_order.apply_with_points(x, points, rng).shape(), x.shape());
  EXPECT_THROW(RandomOrderAug({nullptr}), Error);
}

std::vector<AugmentorPtr> cifar_style() {
  return {std::make_shared<Shift>(2, 6, 6), std::make_shared<Flip>(FlipAxis::horizontal),
          std::make_shared<Brightness>(0.1f)};
}

DataFlowPtr images(int n) {
  std::vector<Datapoint> list;
  for (int i = 0; i < n; ++i) list.push_back({random_f32(Shape{6, 6, 3}, static_cast<std::uint64_t>(i)), scalar(i)});
  return std::make_unique<DataFromList>(std::move(list), false);
}

std::vector<std::vector<float>> image_epoch(DataFlow& df) {
  std::vector<std::vector<float>> out;
  for (const Datapoint& dp : df.epoch()) out.push_back(values<float>(dp[0]));
  return out;
}

TEST(AugmentImageComponent, IsDeterministicFromTheSeedAndDiffersAcrossEpochs) {
  AugmentImageComponent a(images(20), cifar_style(), 0, 5), b(images(20), cifar_style(), 0, 5),
      c(images(20), cifar_style(), 0, 6);
  a.reset_state();
  b.reset_state();
  c.reset_state();
  const auto first = image_epoch(a);
  EXPECT_EQ(first, image_epoch(b));
  EXPECT_NE(first, image_epoch(c));
  EXPECT_NE(first, image_epoch(a));
  EXPECT_EQ(a.size(), 20u);
}

TEST(AugmentImageComponent, WorkerThreadsGiveTheSameImages) {
  AugmentImageComponent serial(images(40), cifar_style(), 0, 11);
  MultiThreadMapData parallel(images(40), augment_component(cifar_style(), 0),
                              {.num_threads = 3, .buffer_size = 8, .ordered = true, .chunk = 2, .seed = 11});
  serial.reset_state();
  parallel.reset_state();
  EXPECT_EQ(image_epoch(serial), image_epoch(parallel));
  EXPECT_EQ(image_epoch(serial), image_epoch(parallel));
}

}  // namespace
}  // namespace vkp::dataflow

namespace vkp::dataflow {
namespace {

// An image [H, W, 1] and its "mask" [H, W] holding the same values: after the same
// geometric augmentation they must still hold the same values.
TEST(AugmentImageComponents, MovesAnImageAndItsMaskTogether) {
  std::vector<Datapoint> points;
  for (int k = 0; k < 6; ++k) {
    Array image(DType::u8, Shape{12, 10, 1}), mask(DType::u8, Shape{12, 10});
    for (std::size_t i = 0; i < 120; ++i)
      image.data<std::uint8_t>()[i] = mask.data<std::uint8_t>()[i] = static_cast<std::uint8_t>((i * 7 + k) % 251);
    points.push_back({image, mask});
  }
  const std::vector<AugmentorPtr> augs{std::make_shared<Flip>(FlipAxis::horizontal), std::make_shared<Rotation>(25),
                                       std::make_shared<RandomCrop>(8, 8)};
  AugmentImageComponents df(std::make_unique<DataFromList>(points, false), augs, {0, 1}, 7);
  df.reset_state();
  int count = 0, changed = 0;
  for (Datapoint& dp : df.epoch()) {
    ASSERT_EQ(dp[0].shape().dims(), (std::vector<std::int64_t>{8, 8, 1}));
    ASSERT_EQ(dp[1].shape().dims(), (std::vector<std::int64_t>{8, 8}));
    for (std::size_t i = 0; i < 64; ++i)
      ASSERT_EQ(dp[0].data<std::uint8_t>()[i], dp[1].data<std::uint8_t>()[i]) << "datapoint " << count << " pixel " << i;
    changed += dp[0].data<std::uint8_t>()[0] != points[static_cast<std::size_t>(count)][0].data<std::uint8_t>()[0];
    ++count;
  }
  EXPECT_EQ(count, 6);
  EXPECT_GT(changed, 0) << "nothing was augmented";
  // Components of different sizes are refused, naming them.
  std::vector<Datapoint> bad{{Array(DType::u8, Shape{4, 4, 1}), Array(DType::u8, Shape{5, 4})}};
  AugmentImageComponents mismatched(std::make_unique<DataFromList>(bad, false), augs, {0, 1});
  mismatched.reset_state();
  EXPECT_THROW(mismatched.next(), Error);
}

}  // namespace
}  // namespace vkp::dataflow
