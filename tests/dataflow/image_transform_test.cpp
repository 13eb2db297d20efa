// Transforms (tensorpack's imgaug.Transform) and the plainest augmentors: each transform
// moves a point where it moves the pixel under it (a one-pixel image's bright spot, or
// the centre of mass of what a resize spreads it into), equals the augmentor that draws
// the same change, composes in order, and refuses images of another size by name.
#include "dataflow/image_transform.h"

#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "dataflow/augmentor_list.h"

namespace vkp::dataflow {
namespace {

// An h x w x 2 f32 image, zero but for 1 at (row, col).
Array spot(std::int64_t h, std::int64_t w, std::int64_t row, std::int64_t col) {
  Array image(DType::f32, Shape{h, w, 2});
  image.data<float>()[static_cast<std::size_t>((row * w + col) * 2)] = 1;
  image.data<float>()[static_cast<std::size_t>((row * w + col) * 2 + 1)] = 1;
  return image;
}

// The centre of mass (x, y) of channel 0.
std::array<double, 2> centre(const Array& image) {
  const std::int64_t h = image.shape()[0], w = image.shape()[1];
  double sx = 0, sy = 0, total = 0;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x) {
      const double v = image.data<float>()[static_cast<std::size_t>((y * w + x) * 2)];
      sx += v * static_cast<double>(x), sy += v * static_cast<double>(y), total += v;
    }
  return {sx / total, sy / total};
}

Array point(double x, double y) { return Array::from(Shape{1, 2}, std::vector<float>{float(x), float(y)}); }

void expect_point_follows_pixel(const ImageTransform& t, std::int64_t h, std::int64_t w, std::int64_t row,
                                std::int64_t col, double tolerance) {
  Array p = point(static_cast<double>(col), static_cast<double>(row));
  t.apply_points(p);
  const std::array<double, 2> c = centre(t.apply_image(spot(h, w, row, col)));
  EXPECT_NEAR(p.data<float>()[0], c[0], tolerance) << "x of the spot from (" << row << ", " << col << ")";
  EXPECT_NEAR(p.data<float>()[1], c[1], tolerance) << "y of the spot from (" << row << ", " << col << ")";
}

TEST(ImageTransforms, PointsMoveWithThePixels) {
  for (auto [row, col] : {std::pair{0, 0}, std::pair{2, 5}, std::pair{6, 8}}) {
    expect_point_follows_pixel(FlipTransform(7, 9, FlipAxis::horizontal), 7, 9, row, col, 0);
    expect_point_follows_pixel(FlipTransform(7, 9, FlipAxis::vertical), 7, 9, row, col, 0);
    if (row >= 1 && col >= 2) expect_point_follows_pixel(CropTransform(1, 2, 6, 7), 7, 9, row, col, 0);
  }
  // Upscaling spreads a spot away from the border symmetrically about where its centre lands.
  expect_point_follows_pixel(ResizeTransform(7, 9, 21, 27), 7, 9, 3, 4, 1e-4);
  expect_point_follows_pixel(
      TransformList({std::make_shared<CropTransform>(1, 1, 5, 7), std::make_shared<ResizeTransform>(5, 7, 15, 21),
                     std::make_shared<FlipTransform>(15, 21)}),
      7, 9, 3, 4, 1e-4);
}

TEST(ImageTransforms, EqualTheAugmentorsThatDrawTheSameChange) {
  Array image = spot(6, 10, 2, 3);
  Rng rng(5);
  Array none(DType::f32, Shape{0, 2});
  const Array resized = Resize(12, 5).apply_with_points(image, none, rng);
  const Array transformed = ResizeTransform(6, 10, 12, 5).apply_image(image);
  ASSERT_EQ(transformed.shape(), resized.shape());
  for (std::size_t i = 0; i < static_cast<std::size_t>(resized.numel()); ++i)
    ASSERT_EQ(transformed.data<float>()[i], resized.data<float>()[i]) << i;
  const Array cropped = CropTransform(1, 2, 4, 5).apply_image(image);
  EXPECT_EQ(cropped.shape(), (Shape{4, 5, 2}));
  EXPECT_EQ(cropped.data<float>()[static_cast<std::size_t>((1 * 5 + 1) * 2)], 1.0f) << "(2, 3) lands at (1, 1)";
  const Array twice = FlipTransform(6, 10).apply_image(FlipTransform(6, 10).apply_image(image));
  for (std::size_t i = 0; i < static_cast<std::size_t>(image.numel()); ++i)
    ASSERT_EQ(twice.data<float>()[i], image.data<float>()[i]) << "two flips are none";
}

TEST(ImageTransforms, RefuseImagesTheyWereNotMadeFor) {
  try {
    ResizeTransform(6, 10, 3, 3).apply_image(Array(DType::f32, Shape{5, 10, 1}));
    FAIL() << "a 5 x 10 image given to a transform for 6 x 10";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("made for 6 x 10 images, given"), std::string::npos) << e.what();
  }
  EXPECT_THROW(FlipTransform(6, 10).apply_image(Array(DType::u8, Shape{6, 9})), Error);
  EXPECT_THROW(CropTransform(2, 2, 5, 5).apply_image(Array(DType::u8, Shape{6, 6})), Error) << "past the bottom";
  EXPECT_THROW(CropTransform(-1, 0, 2, 2), Error);
  EXPECT_THROW(ResizeTransform(0, 3, 2, 2), Error);
  EXPECT_THROW(TransformList({nullptr}), Error);
}

TEST(ImageTransforms, AFactoryMovesPointsOnlyWithAFunctionForThem) {
  const TransformFactory negate("negate", [](Array a) {
    for (float& v : a.data<float>()) v = 1 - v;
    return a;
  });
  EXPECT_EQ(negate.apply_image(spot(2, 2, 0, 0)).data<float>()[0], 0.0f);
  Array p = point(1, 1);
  try {
    negate.apply_points(p);
    FAIL() << "no function for points";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("'negate'"), std::string::npos) << e.what();
  }
  const TransformFactory shift(
      "shift", [](Array a) { return a; }, [](Array& q) { q.data<float>()[0] += 2; });
  shift.apply_points(p);
  EXPECT_EQ(p.data<float>()[0], 3.0f);
}

TEST(PlainAugmentors, IdentityKeepsAndMapImageApplies) {
  Rng rng(3);
  Array p = point(2, 3);
  const Array same = Identity().apply_with_points(spot(4, 4, 1, 2), p, rng);
  EXPECT_EQ(centre(same)[0], 2.0);
  EXPECT_EQ(p.data<float>()[0], 2.0f);
  const MapImage doubled([](Array a) {
    for (float& v : a.data<float>()) v *= 2;
    return a;
  });
  EXPECT_EQ(doubled.apply(spot(2, 2, 1, 1), rng).data<float>()[6], 2.0f);
  EXPECT_THROW(doubled.apply_with_points(spot(2, 2, 1, 1), p, rng), Error) << "it cannot know how points move";
  const MapImage with_points([](Array a) { return a; }, [](Array& q) { q.data<float>()[1] = 0; });
  with_points.apply_with_points(spot(2, 2, 1, 1), p, rng);
  EXPECT_EQ(p.data<float>()[1], 0.0f);
}

}  // namespace
}  // namespace vkp::dataflow
