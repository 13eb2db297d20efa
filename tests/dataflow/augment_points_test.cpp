// Points moved with their image (ImageAugmentor::apply_with_points, AugmentImageCoordinates),
// checked against where the image itself moved: an image holding one bright pixel (for
// flips, crops and shifts, which move pixels exactly) or a Gaussian blob (for resizes and
// warps, which resample) at a random point; after augmentation the point must sit on the
// bright pixel, or on the blob's intensity-weighted centroid, in the augmented image.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "dataflow/augment_image_component.h"
#include "dataflow/augmentor_list.h"
#include "dataflow/color_augmentors.h"
#include "dataflow/data_from_list.h"
#include "dataflow/geometric_augmentors.h"
#include "dataflow/multi_thread_map_data.h"
#include "dataflow/photometric_augmentors.h"
#include "dataflow/warp_augmentors.h"

namespace vkp::dataflow {
namespace {

constexpr double kSigma = 2.0;

Array points_of(double x, double y) {
  Array p(DType::f32, Shape{1, 2});
  p.data<float>()[0] = static_cast<float>(x);
  p.data<float>()[1] = static_cast<float>(y);
  return p;
}

// h x w x 2 f32: a Gaussian blob at (x, y) in both channels (sigma 0: one pixel of 1).
Array blob(std::int64_t h, std::int64_t w, double x, double y, double sigma) {
  Array image(DType::f32, Shape{h, w, 2});
  for (std::int64_t r = 0; r < h; ++r)
    for (std::int64_t c = 0; c < w; ++c) {
      const double d2 = (static_cast<double>(c) - x) * (static_cast<double>(c) - x) +
                        (static_cast<double>(r) - y) * (static_cast<double>(r) - y);
      const double v = sigma == 0 ? (d2 == 0 ? 1.0 : 0.0) : std::exp(-d2 / (2 * sigma * sigma));
      for (int k = 0; k < 2; ++k) image.data<float>()[static_cast<std::size_t>((r * w + c) * 2 + k)] = static_cast<float>(v);
    }
  return image;
}

// The intensity-weighted centroid (x, y) of channel 0, and the total intensity.
std::array<double, 3> centroid(const Array& image) {
  const std::int64_t h = image.shape()[0], w = image.shape()[1], c = image.shape()[2];
  double sx = 0, sy = 0, total = 0;
  for (std::int64_t r = 0; r < h; ++r)
    for (std::int64_t x = 0; x < w; ++x) {
      const double v = image.data<float>()[static_cast<std::size_t>((r * w + x) * c)];
      sx += v * static_cast<double>(x), sy += v * static_cast<double>(r), total += v;
    }
  return {sx / total, sy / total, total};
}

bool well_inside(const Array& image, double x, double y, double margin) {
  return x >= margin && y >= margin && x <= static_cast<double>(image.shape()[1]) - 1 - margin &&
         y <= static_cast<double>(image.shape()[0]) - 1 - margin;
}

// Over `trials` draws of the point and of the augmentation: the moved point lies on the
// bright pixel (exact) or the blob's centroid (within `tolerance` pixels) wherever the
// feature stays well inside the augmented image. Returns how many trials were checked.
int check_moves_with_image(const ImageAugmentor& aug, bool exact, double tolerance, std::int64_t h = 37,
                           std::int64_t w = 45) {
  int checked = 0;
  const double margin = exact ? 0 : 4 * kSigma + 2;
  for (std::uint64_t trial = 0; trial < 40; ++trial) {
    Rng where(99, trial);
    const double x = exact ? static_cast<double>(where.below(static_cast<std::uint64_t>(w)))
                           : margin + where.uniform() * (static_cast<double>(w) - 1 - 2 * margin);
    const double y = exact ? static_cast<double>(where.below(static_cast<std::uint64_t>(h)))
                           : margin + where.uniform() * (static_cast<double>(h) - 1 - 2 * margin);
    Array points = points_of(x, y);
    Rng rng(7, trial), same(7, trial);
    const Array moved = aug.apply_with_points(blob(h, w, x, y, exact ? 0 : kSigma), points, rng);
    // The image is what apply() makes with the same draws.
    const Array plain = aug.apply(blob(h, w, x, y, exact ? 0 : kSigma), same);
    EXPECT_TRUE(std::equal(moved.bytes().begin(), moved.bytes().end(), plain.bytes().begin(), plain.bytes().end()));
    const double px = points.data<float>()[0], py = points.data<float>()[1];
    if (!well_inside(moved, px, py, exact ? 0 : margin)) continue;
    ++checked;
    if (exact) {
      const auto ix = static_cast<std::int64_t>(std::lround(px)), iy = static_cast<std::int64_t>(std::lround(py));
      EXPECT_EQ(px, static_cast<double>(ix));
      EXPECT_EQ(py, static_cast<double>(iy));
      const std::int64_t mw = moved.shape()[1];
      EXPECT_EQ(moved.data<float>()[static_cast<std::size_t>((iy * mw + ix) * 2)], 1.0f) << "trial " << trial;
      EXPECT_EQ(centroid(moved)[2], 1.0) << "the pixel is in the image once";
    } else {
      const auto [cx, cy, total] = centroid(moved);
      EXPECT_NEAR(px, cx, tolerance) << "trial " << trial;
      EXPECT_NEAR(py, cy, tolerance) << "trial " << trial;
    }
  }
  return checked;
}

TEST(AugmentPoints, FlipsMovePointsWithTheirPixels) {
  EXPECT_EQ(check_moves_with_image(Flip(FlipAxis::horizontal, 1.0), true, 0), 40);
  EXPECT_EQ(check_moves_with_image(Flip(FlipAxis::vertical, 1.0), true, 0), 40);
  EXPECT_EQ(check_moves_with_image(Flip(FlipAxis::horizontal, 0.5), true, 0), 40);
}

TEST(AugmentPoints, CropsAndShiftsMovePointsWithTheirPixels) {
  EXPECT_GT(check_moves_with_image(RandomCrop(20, 31), true, 0), 5);
  EXPECT_GT(check_moves_with_image(CenterCrop(21, 30), true, 0), 5);
  EXPECT_GT(check_moves_with_image(Shift(6, 37, 45), true, 0), 20);
  EXPECT_GT(check_moves_with_image(Shift(3, 30, 40), true, 0), 10);
}

TEST(AugmentPoints, ResizesMovePointsWithTheBlob) {
  EXPECT_GT(check_moves_with_image(Resize(61, 70), false, 0.05), 30);  // up, by unequal factors
  EXPECT_GT(check_moves_with_image(Resize(52, 90), false, 0.05), 30);
  EXPECT_GT(check_moves_with_image(ResizeShortestEdge(50), false, 0.05), 30);
}

TEST(AugmentPoints, WarpsMovePointsWithTheBlob) {
  EXPECT_GT(check_moves_with_image(Rotation(40), false, 0.05, 61, 73), 20);
  const AffineOptions all{
      .scale_min = 0.9, .scale_max = 1.3, .translate_frac = 0.1, .rotate_max_deg = 30, .shear_max_deg = 15};
  EXPECT_GT(check_moves_with_image(Affine(all), false, 0.05, 61, 73), 15);
  EXPECT_GT(check_moves_with_image(Affine({.shear_max_deg = 20, .border = Border::reflect}), false, 0.05, 61, 73), 20);
  // Up to 2.5 times larger: the tolerance in input pixels stays 0.05.
  EXPECT_GT(check_moves_with_image(GoogleNetRandomCropAndResize(64, 64, {0.5, 1.0}), false, 0.125), 5);
}

TEST(AugmentPoints, ListsAndRandomChoicesMovePointsThroughWhatTheyApply) {
  const AugmentorList chain({std::make_shared<Rotation>(20), std::make_shared<Flip>(FlipAxis::horizontal),
                             std::make_shared<Resize>(70, 80)});
  EXPECT_GT(check_moves_with_image(chain, false, 0.05, 61, 73), 15);
  EXPECT_EQ(check_moves_with_image(RandomApplyAug(std::make_shared<Flip>(FlipAxis::vertical, 1.0), 0.5), true, 0), 40);
  const RandomChooseAug choose({std::make_shared<Flip>(FlipAxis::vertical, 1.0), std::make_shared<Shift>(2, 37, 45)});
  EXPECT_GT(check_moves_with_image(choose, true, 0), 20);
}

TEST(AugmentPoints, ValueAugmentorsLeavePoints) {
  for (const AugmentorPtr& aug : std::vector<AugmentorPtr>{std::make_shared<Brightness>(0.3f),
                                                           std::make_shared<GaussianNoise>(0.1f),
                                                           std::make_shared<RandomCutout>(3, 9)}) {
    Array points = points_of(12.25, 7.5);
    Rng rng(3), same(3);
    const Array out = aug->apply_with_points(blob(20, 30, 5, 5, kSigma), points, rng);
    const Array plain = aug->apply(blob(20, 30, 5, 5, kSigma), same);
    EXPECT_TRUE(std::equal(out.bytes().begin(), out.bytes().end(), plain.bytes().begin(), plain.bytes().end()));
    EXPECT_EQ(points.data<float>()[0], 12.25f);
    EXPECT_EQ(points.data<float>()[1], 7.5f);
  }
}

// An augmentor of a user's that moves pixels but does not say how: refused, not ignored.
class Transposer : public ImageAugmentor {
 public:
  Array apply(Array image, Rng&) const override { return image; }
};

TEST(AugmentPoints, AnAugmentorThatCannotMovePointsIsRefused) {
  Array points = points_of(1, 2);
  Rng rng(1);
  EXPECT_THROW(Transposer().apply_with_points(blob(4, 4, 1, 1, 0), points, rng), Error);
  Array bad(DType::f32, Shape{2, 3});
  EXPECT_THROW(Flip(FlipAxis::horizontal).apply_with_points(blob(4, 4, 1, 1, 0), bad, rng), Error);
  EXPECT_THROW(Brightness(0.1f).apply_with_points(blob(4, 4, 1, 1, 0), bad, rng), Error);
}

std::vector<Datapoint> images_with_points(int count) {
  std::vector<Datapoint> list;
  for (int i = 0; i < count; ++i) {
    const double x = 12 + i % 7 * 3, y = 11 + i % 5 * 3;
    list.push_back({blob(37, 45, x, y, kSigma), points_of(x, y), Array::from(Shape{}, std::vector<std::int32_t>{i})});
  }
  return list;
}

TEST(AugmentImageCoordinates, MovesEachDatapointsPointsWithItsImage) {
  const std::vector<AugmentorPtr> augs{std::make_shared<Rotation>(25), std::make_shared<Flip>(FlipAxis::horizontal),
                                       std::make_shared<Resize>(40, 40)};
  AugmentImageCoordinates flow(std::make_unique<DataFromList>(images_with_points(24), false), augs, 0, 1, 5);
  // The images are those AugmentImageComponent makes with the same seed: the same draws.
  AugmentImageComponent images(std::make_unique<DataFromList>(images_with_points(24), false), augs, 0, 5);
  flow.reset_state();
  images.reset_state();
  int count = 0;
  while (auto dp = flow.next()) {
    const Datapoint image_only = *images.next();
    EXPECT_TRUE(std::equal((*dp)[0].bytes().begin(), (*dp)[0].bytes().end(), image_only[0].bytes().begin(),
                           image_only[0].bytes().end()));
    const auto [cx, cy, total] = centroid((*dp)[0]);
    EXPECT_NEAR((*dp)[1].data<float>()[0], cx, 0.05) << "datapoint " << count;
    EXPECT_NEAR((*dp)[1].data<float>()[1], cy, 0.05) << "datapoint " << count;
    ++count;
  }
  EXPECT_EQ(count, 24);
}

TEST(AugmentImageCoordinates, OnWorkerThreadsYieldsWhatItYieldsOnOne) {
  const AffineOptions affine{
      .scale_min = 0.8, .scale_max = 1.2, .translate_frac = 0.1, .rotate_max_deg = 20, .shear_max_deg = 5};
  const std::vector<AugmentorPtr> augs{std::make_shared<Affine>(affine), std::make_shared<Shift>(3, 37, 45)};
  AugmentImageCoordinates one(std::make_unique<DataFromList>(images_with_points(40), false), augs, 0, 1, 11);
  MultiThreadMapData many(std::make_unique<DataFromList>(images_with_points(40), false), augment_coordinates(augs, 0, 1),
                          {.num_threads = 3, .chunk = 4, .seed = 11});
  one.reset_state();
  many.reset_state();
  for (int i = 0; i < 40; ++i) {
    const Datapoint a = *one.next(), b = *many.next();
    for (int k = 0; k < 2; ++k)
      EXPECT_TRUE(std::equal(a[static_cast<std::size_t>(k)].bytes().begin(), a[static_cast<std::size_t>(k)].bytes().end(),
                             b[static_cast<std::size_t>(k)].bytes().begin(), b[static_cast<std::size_t>(k)].bytes().end()))
          << "datapoint " << i << " component " << k;
  }
}

TEST(AugmentImageCoordinates, ErrorsNameTheProblem) {
  std::vector<Datapoint> list{{blob(8, 8, 2, 2, 0)}};
  AugmentImageCoordinates missing(std::make_unique<DataFromList>(list, false), {std::make_shared<Flip>(FlipAxis::horizontal)});
  missing.reset_state();
  EXPECT_THROW(missing.next(), Error);
  AugmentImageCoordinates refused(std::make_unique<DataFromList>(images_with_points(1), false),
                                  {std::make_shared<Transposer>()});
  refused.reset_state();
  try {
    refused.next();
    ADD_FAILURE() << "an augmentor that cannot move points was used";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("apply_with_points"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::dataflow
