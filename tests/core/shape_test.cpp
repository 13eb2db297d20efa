#include "core/shape.h"

#include <gtest/gtest.h>

#include "core/error.h"

namespace vkp {
namespace {

TEST(Shape, ScalarHasRankZeroAndOneElement) {
  const Shape s;
  EXPECT_EQ(s.rank(), 0);
  EXPECT_EQ(s.numel(), 1);
  EXPECT_EQ(to_string(s), "[]");
}

TEST(Shape, StridesAreRowMajor) {
  const Shape s{2, 3, 4};
  EXPECT_EQ(s.strides(), (std::vector<std::int64_t>{12, 4, 1}));
  EXPECT_EQ(s.numel(), 24);
  EXPECT_EQ(s[-1], 4);
}

TEST(Shape, NegativeExtentAndBadAxisAreErrors) {
  EXPECT_THROW(Shape({2, -1}), Error);
  EXPECT_THROW(Shape({2, 3})[2], Error);
}

}  // namespace
}  // namespace vkp
