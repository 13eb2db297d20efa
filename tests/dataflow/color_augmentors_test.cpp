// Colour augmentors against exact colours and algebra: a hue turn of 120 degrees sends
// red to green to blue, turns compose and a full turn is the identity, grey has no hue;
// Saturation and Lighting against their formulas computed here with the same draws.
#include <gtest/gtest.h>

#include <cmath>

#include "core/error.h"
#include "dataflow/color_augmentors.h"

namespace vkp::dataflow {
namespace {

void expect_rgb(std::array<float, 3> got, std::array<float, 3> want, float tolerance = 1e-5f) {
  for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(got[c], want[c], tolerance) << "channel " << c;
}

TEST(RotateHue, TurnsPrimariesIntoEachOtherAndComposes) {
  expect_rgb(rotate_hue({1, 0, 0}, 120), {0, 1, 0});
  expect_rgb(rotate_hue({0, 1, 0}, 120), {0, 0, 1});
  expect_rgb(rotate_hue({0, 0, 1}, 120), {1, 0, 0});
  expect_rgb(rotate_hue({200, 100, 100}, 60), {200, 200, 100}, 1e-3f);  // red-ish to yellow-ish, any scale
  expect_rgb(rotate_hue({0.3f, 0.3f, 0.3f}, 77), {0.3f, 0.3f, 0.3f});   // grey
  Rng rng(5);
  for (int i = 0; i < 200; ++i) {
    const std::array<float, 3> p{rng.uniform(), rng.uniform(), rng.uniform()};
    const float a = rng.uniform(-180, 180), b = rng.uniform(-180, 180);
    expect_rgb(rotate_hue(rotate_hue(p, a), b), rotate_hue(p, a + b), 2e-5f);
    expect_rgb(rotate_hue(p, 360), p, 2e-5f);
    expect_rgb(rotate_hue(rotate_hue(p, a), -a), p, 2e-5f);
  }
}

Array rgb_image(DType dtype) {
  Array a(dtype, Shape{2, 3, 3});
  for (std::size_t i = 0; i < 18; ++i) {
    const float v = static_cast<float>((i * 53) % 256);
    if (dtype == DType::u8) a.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(v);
    else a.data<float>()[i] = v / 255.0f;
  }
  return a;
}

TEST(Saturation, BlendsEachPixelWithItsGrey) {
  const Array in = rgb_image(DType::f32);
  Rng rng(3), same(3);
  const Array out = Saturation(0.5f).apply(in, rng);
  const float v = 1.0f + same.uniform(-0.5f, 0.5f);
  for (std::size_t p = 0; p < 6; ++p) {
    const float* x = in.data<float>().data() + 3 * p;
    const float grey = 0.299f * x[0] + 0.587f * x[1] + 0.114f * x[2];
    for (std::size_t c = 0; c < 3; ++c) EXPECT_NEAR(out.data<float>()[3 * p + c], x[c] * v + grey * (1 - v), 1e-6f);
  }
  Rng rng8(4);
  const Array u8 = Saturation(0.5f).apply(rgb_image(DType::u8), rng8);  // clamped and rounded, no wrap-around
  EXPECT_EQ(u8.dtype(), DType::u8);
}

TEST(Lighting, AddsOneColourShiftFromThePrincipalComponents) {
  const std::array<float, 3> eigval{0.2f, 0.05f, 0.01f};
  const std::array<std::array<float, 3>, 3> eigvec{{{-0.57f, 0.72f, 0.40f}, {-0.58f, -0.01f, -0.81f}, {-0.58f, -0.69f, 0.42f}}};
  const Array in = rgb_image(DType::f32);
  Rng rng(8), same(8);
  const Array out = Lighting(0.1f, eigval, eigvec).apply(in, rng);
  std::array<float, 3> alpha;
  for (float& a : alpha) a = same.normal() * 0.1f;
  for (std::size_t i = 0; i < 18; ++i) {
    const std::size_t c = i % 3;
    const float delta = eigvec[c][0] * alpha[0] * eigval[0] + eigvec[c][1] * alpha[1] * eigval[1] + eigvec[c][2] * alpha[2] * eigval[2];
    EXPECT_NEAR(out.data<float>()[i], in.data<float>()[i] + delta, 1e-6f) << i;
  }
}

TEST(Hue, TurnsEveryPixelByOneDrawnAngle) {
  const Array in = rgb_image(DType::f32);
  Rng rng(6), same(6);
  const Array out = Hue(90).apply(in, rng);
  const float degrees = same.uniform(-90, 90);
  for (std::size_t p = 0; p < 6; ++p) {
    const float* x = in.data<float>().data() + 3 * p;
    expect_rgb({out.data<float>()[3 * p], out.data<float>()[3 * p + 1], out.data<float>()[3 * p + 2]},
               rotate_hue({x[0], x[1], x[2]}, degrees));
  }
}

TEST(Hue, RefusesImagesThatAreNotRgb) {
  Rng rng(1);
  EXPECT_THROW(Hue(30).apply(Array(DType::f32, Shape{4, 4, 1}), rng), Error);
}

}  // namespace
}  // namespace vkp::dataflow
