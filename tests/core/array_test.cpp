#include "core/array.h"

#include <gtest/gtest.h>

namespace vkp {
namespace {

TEST(Array, IsZeroFilledWithBytesForItsShapeAndDtype) {
  const Array a(DType::i64, Shape{2, 3});
  EXPECT_EQ(a.nbytes(), 48u);
  EXPECT_EQ(a.numel(), 6);
  for (std::int64_t v : a.data<std::int64_t>()) EXPECT_EQ(v, 0);
  EXPECT_EQ(describe(a), "i64[2, 3]");
}

TEST(Array, UninitializedHasTheShapeAndDtypeAndWritableBytes) {
  Array a = Array::uninitialized(DType::f32, Shape{3, 5});
  EXPECT_EQ(describe(a), "f32[3, 5]");
  EXPECT_EQ(a.nbytes(), 60u);
  std::span<float> v = a.data<float>();
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = static_cast<float>(i);
  EXPECT_FLOAT_EQ(a.data<float>()[14], 14.0f);
  EXPECT_EQ(Array::uninitialized(DType::u8, Shape{0, 4}).nbytes(), 0u);
}

TEST(Array, ZeroFillingConstructorAndCopiesStayDefined) {
  // The storage no longer zero-fills by itself: the zero-filling constructor and copies
  // must still give defined bytes.
  for (int round = 0; round < 8; ++round) {
    Array junk = Array::uninitialized(DType::u8, Shape{4096});
    for (std::byte& b : junk.bytes()) b = std::byte{0xAB};
  }
  const Array zeros(DType::u8, Shape{4096});
  for (std::byte b : zeros.bytes()) ASSERT_EQ(b, std::byte{0});
  Array a = Array::from<std::int32_t>(Shape{3}, std::vector<std::int32_t>{7, 8, 9});
  Array b = a;
  a.data<std::int32_t>()[0] = 1;
  EXPECT_EQ(b.data<std::int32_t>()[0], 7);
}

TEST(Array, FromCopiesValuesInRowMajorOrder) {
  const Array a = Array::from<float>(Shape{2, 2}, std::vector<float>{1, 2, 3, 4});
  EXPECT_EQ(a.dtype(), DType::f32);
  EXPECT_FLOAT_EQ(a.data<float>()[3], 4.0f);
}

TEST(Array, FromRejectsWrongValueCount) {
  try {
    Array::from<float>(Shape{2, 3}, std::vector<float>{1, 2});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("needs 6 values, got 2"), std::string::npos) << e.what();
  }
}

TEST(Array, TypedViewOfAnotherDtypeIsAnError) {
  Array a(DType::u8, Shape{4});
  EXPECT_THROW(a.data<float>(), Error);
}

TEST(Array, ReshapeKeepsBytesAndChecksElementCount) {
  Array a = Array::from<std::int32_t>(Shape{2, 3}, std::vector<std::int32_t>{1, 2, 3, 4, 5, 6});
  const Array b = a.reshaped(Shape{3, 2});
  EXPECT_EQ(b.shape(), (Shape{3, 2}));
  EXPECT_EQ(b.data<std::int32_t>()[5], 6);
  EXPECT_THROW(a.reshaped(Shape{4, 2}), Error);
}

TEST(DType, ParsesNamesAndRejectsUnknownOnes) {
  EXPECT_EQ(parse_dtype("float16"), DType::f16);
  EXPECT_EQ(parse_dtype("u8"), DType::u8);
  EXPECT_EQ(size_of(DType::f16), 2u);
  EXPECT_THROW(parse_dtype("bf16"), Error);
}

}  // namespace
}  // namespace vkp
