// ColorSpace against OpenCV's cv2.cvtColor (images_cv2.py convert, Debian's
// python3-opencv) on an image of many colours, u8 and f32, each conversion it offers.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "core/error.h"
#include "dataflow/color_augmentors.h"

namespace vkp::dataflow {
namespace {

constexpr std::int64_t kH = 16, kW = 16;

std::filesystem::path scratch(const std::string& name) {
  return std::filesystem::temp_directory_path() / ("vkpack-cs-" + std::to_string(getpid()) + "-" + name);
}

template <class T>
void write_raw(const std::filesystem::path& path, const Array& a) {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(a.data<T>().data()), static_cast<std::streamsize>(a.nbytes()));
}

// cv2.cvtColor(image, cv2.<code>) of an H x W x 3 image, read back with `shape`.
Array opencv(const std::string& code, const Array& image, Shape shape) {
  const bool u8 = image.dtype() == DType::u8;
  const std::filesystem::path in = scratch("in"), out = scratch("out");
  if (u8)
    write_raw<std::uint8_t>(in, image);
  else
    write_raw<float>(in, image);
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_IMAGES_CV2 + " convert " + code + " " +
                              in.string() + " " + out.string() + (u8 ? " uint8 " : " float32 ") + std::to_string(kH) +
                              " " + std::to_string(kW);
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  Array result(image.dtype(), std::move(shape));
  std::ifstream(out, std::ios::binary)
      .read(reinterpret_cast<char*>(result.bytes().data()), static_cast<std::streamsize>(result.nbytes()));
  std::filesystem::remove(in);
  std::filesystem::remove(out);
  return result;
}

// Every hue, saturation and value in 256 pixels: channel c of (y, x) is (37 y + 11 x + 71 c) mod 256.
Array colours(DType dtype) {
  Array image(dtype, Shape{kH, kW, 3});
  for (std::int64_t i = 0; i < kH * kW * 3; ++i) {
    const std::int64_t y = i / (kW * 3), x = (i / 3) % kW, c = i % 3;
    const auto v = static_cast<std::uint8_t>((37 * y + 11 * x + 71 * c) % 256);
    if (dtype == DType::u8)
      image.data<std::uint8_t>()[static_cast<std::size_t>(i)] = v;
    else
      image.data<float>()[static_cast<std::size_t>(i)] = static_cast<float>(v) / 255.0f;
  }
  return image;
}

Array convert(ColorConversion conversion, Array image, bool keepdims = false) {
  Rng rng(1);
  return ColorSpace(conversion, keepdims).apply(std::move(image), rng);
}

// Largest difference, hue channels (every third, when `hue_period` > 0) taken around the circle.
double max_difference(const Array& got, const Array& want, double hue_period = 0) {
  EXPECT_EQ(got.shape(), want.shape());
  double worst = 0;
  const std::size_t n = static_cast<std::size_t>(got.numel());
  for (std::size_t i = 0; i < n; ++i) {
    const double a = got.dtype() == DType::u8 ? got.data<std::uint8_t>()[i] : got.data<float>()[i];
    const double b = want.dtype() == DType::u8 ? want.data<std::uint8_t>()[i] : want.data<float>()[i];
    double d = std::abs(a - b);
    if (hue_period > 0 && i % 3 == 0) d = std::min(d, hue_period - d);
    worst = std::max(worst, d);
  }
  return worst;
}

TEST(ColorSpace, HsvOfU8ImagesIsOpenCvsWithinARounding) {
  const Array rgb = colours(DType::u8);
  EXPECT_LE(max_difference(convert(ColorConversion::rgb_to_hsv, rgb), opencv("COLOR_RGB2HSV", rgb, {kH, kW, 3}), 180),
            1.0);
  EXPECT_LE(max_difference(convert(ColorConversion::bgr_to_hsv, rgb), opencv("COLOR_BGR2HSV", rgb, {kH, kW, 3}), 180),
            1.0);
  // And back, from OpenCV's own HSV of the colours.
  const Array hsv = opencv("COLOR_RGB2HSV", rgb, {kH, kW, 3});
  EXPECT_LE(max_difference(convert(ColorConversion::hsv_to_rgb, hsv), opencv("COLOR_HSV2RGB", hsv, {kH, kW, 3})), 1.0);
  EXPECT_LE(max_difference(convert(ColorConversion::hsv_to_bgr, hsv), opencv("COLOR_HSV2BGR", hsv, {kH, kW, 3})), 1.0);
}

TEST(ColorSpace, HsvOfF32ImagesIsOpenCvsInDegrees) {
  const Array rgb = colours(DType::f32);
  EXPECT_LE(max_difference(convert(ColorConversion::rgb_to_hsv, rgb), opencv("COLOR_RGB2HSV", rgb, {kH, kW, 3}), 360),
            1e-3);
  const Array hsv = opencv("COLOR_RGB2HSV", rgb, {kH, kW, 3});
  EXPECT_LE(max_difference(convert(ColorConversion::hsv_to_rgb, hsv), rgb), 1e-5) << "HSV and back is the identity";
  EXPECT_LE(max_difference(convert(ColorConversion::hsv_to_bgr, hsv), opencv("COLOR_HSV2BGR", hsv, {kH, kW, 3})), 1e-5);
}

TEST(ColorSpace, GreyAndChannelOrderAsOpenCv) {
  const Array rgb = colours(DType::u8);
  EXPECT_EQ(max_difference(convert(ColorConversion::rgb_to_bgr, rgb), opencv("COLOR_RGB2BGR", rgb, {kH, kW, 3})), 0);
  const Array grey = convert(ColorConversion::rgb_to_gray, rgb);
  EXPECT_EQ(grey.shape(), (Shape{kH, kW})) << "keepdims false: [H, W]";
  EXPECT_LE(max_difference(grey, opencv("COLOR_RGB2GRAY", rgb, {kH, kW})), 1.0);
  EXPECT_LE(max_difference(convert(ColorConversion::bgr_to_gray, rgb, true).reshaped(Shape{kH, kW}),
                           opencv("COLOR_BGR2GRAY", rgb, {kH, kW})),
            1.0);
  EXPECT_EQ(convert(ColorConversion::bgr_to_gray, rgb, true).shape(), (Shape{kH, kW, 1}));
}

TEST(ColorSpace, RefusesImagesWithoutThreeChannels) {
  EXPECT_THROW(convert(ColorConversion::rgb_to_hsv, Array(DType::u8, Shape{4, 4, 1})), Error);
  EXPECT_THROW(convert(ColorConversion::hsv_to_rgb, Array(DType::u8, Shape{4, 4})), Error);
}

}  // namespace
}  // namespace vkp::dataflow
