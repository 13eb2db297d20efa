#include "core/half.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <limits>
#include <vector>

namespace vkp {
namespace {

// Reference values from the binary16 format: sign 1, exponent 5 (bias 15), fraction 10.
TEST(Half, EncodesKnownValues) {
  EXPECT_EQ(to_half(1.0f).bits, 0x3c00);
  EXPECT_EQ(to_half(-2.0f).bits, 0xc000);
  EXPECT_EQ(to_half(65504.0f).bits, 0x7bff);           // largest finite
  EXPECT_EQ(to_half(65520.0f).bits, 0x7c00);           // rounds to infinity
  EXPECT_EQ(to_half(0x1.0p-24f).bits, 0x0001);         // smallest subnormal
  EXPECT_EQ(to_half(0x1.0p-25f).bits, 0x0000);         // tie to even: zero
  EXPECT_EQ(to_half(0x1.8p-25f).bits, 0x0001);         // above the tie
  EXPECT_EQ(to_half(0x1.0p-14f).bits, 0x0400);         // smallest normal
  EXPECT_EQ(to_half(1.0f + 0x1.0p-11f).bits, 0x3c00);  // tie to even (down)
  EXPECT_EQ(to_half(1.0f + 0x1.8p-11f).bits, 0x3c01);  // tie rounds up past half
  EXPECT_EQ(to_half(std::numeric_limits<float>::infinity()).bits, 0x7c00);
  EXPECT_EQ(to_half(std::nanf("")).bits & 0x7c00, 0x7c00);
  EXPECT_NE(to_half(std::nanf("")).bits & 0x03ff, 0);
}

TEST(Half, EveryHalfRoundTripsThroughFloat) {
  for (std::uint32_t bits = 0; bits < 0x10000; ++bits) {
    const Half h{static_cast<std::uint16_t>(bits)};
    const float f = to_float(h);
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(to_float(to_half(f))));
      continue;
    }
    ASSERT_EQ(to_half(f).bits, bits) << "half 0x" << std::hex << bits << " -> " << f;
  }
}

TEST(Half, DecodesSubnormalsExactly) {
  EXPECT_EQ(to_float(Half{0x0001}), 0x1.0p-24f);
  EXPECT_EQ(to_float(Half{0x03ff}), 0x1.ff8p-15f);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(to_float(Half{0x8000})), 0x80000000u);
}

// Two halves a little-endian word, the first in the low bits; an odd count padded with 0.
TEST(Half, PacksTwoAWord) {
  const std::vector<float> words = pack_halves(std::vector<float>{1.0f, -2.0f, 0.5f});
  ASSERT_EQ(words.size(), 2u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(words[0]), 0xc0003c00u);
  EXPECT_EQ(std::bit_cast<std::uint32_t>(words[1]), 0x00003800u);
  EXPECT_TRUE(pack_halves(std::vector<float>{}).empty());
}

}  // namespace
}  // namespace vkp
