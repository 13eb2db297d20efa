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

TEST(Shape, ExtentsWhoseProductOverflowsAreErrorsEvenBesideAZero) {
  // A zero extent makes no elements, but the strides before it multiply the others: a
  // file's header declared [800000000000000001, 4000, 0, 0] (found by fuzzing .npy).
  EXPECT_THROW(Shape({800000000000000001, 4000, 0, 0}), Error);
  EXPECT_THROW(Shape({0, std::int64_t{1} << 40, std::int64_t{1} << 40}), Error);
  const Shape empty({0, std::int64_t{1} << 40, 4});
  EXPECT_EQ(empty.numel(), 0);
  EXPECT_EQ(empty.strides(), (std::vector<std::int64_t>{std::int64_t{4} << 40, 4, 1}));
}

TEST(Broadcast, AlignsFromTheLastAxisAndStretchesOnes) {
  EXPECT_EQ(broadcast_shapes(Shape{4, 1, 3}, Shape{5, 1}), (Shape{4, 5, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{}, Shape{2, 3}), (Shape{2, 3}));
  EXPECT_EQ(broadcast_shapes(Shape{0, 1}, Shape{1, 7}), (Shape{0, 7}));
}

// A graph's unknown extents (below 0): unknown with n is n, with 1 or unknown unknown.
TEST(Broadcast, UnknownExtentsTakeTheKnownOneOrStayUnknown) {
  EXPECT_EQ(broadcast_dims({-1, 4}, {8, 1}), (std::vector<std::int64_t>{8, 4}));
  EXPECT_EQ(broadcast_dims({-1, 4}, {1, 4}), (std::vector<std::int64_t>{-1, 4}));
  EXPECT_EQ(broadcast_dims({-1}, {-1}), (std::vector<std::int64_t>{-1}));
  EXPECT_EQ(broadcast_dims({3}, {-1, -1}), (std::vector<std::int64_t>{-1, 3}));
}

TEST(Broadcast, ClashingExtentsNameBothAndTheAxis) {
  try {
    broadcast_dims({-1, 3, 4}, {5, 4});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_STREQ(e.what(), "shapes [?, 3, 4] and [5, 4] do not broadcast: axis -2 has 3 and 5");
  }
}

}  // namespace
}  // namespace vkp
