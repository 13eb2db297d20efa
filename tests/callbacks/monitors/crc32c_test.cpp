// TFRecord's masked CRC, worked by hand from the catalogue check value of CRC-32C
// (core/crc32c.h, tested against the published vectors in tests/core/crc32c_test.cpp).
#include "callbacks/monitors/crc32c.h"

#include <gtest/gtest.h>

namespace vkp::callbacks {
namespace {

TEST(MaskedCrc32c, MasksAsTFRecordDoes) {
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, by hand for crc("123456789") = 0xE3069283:
  // rotate right 15 -> 0x2507C60D, plus 0xa282ead8 -> 0xC78AB0E5.
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
  // crc of "" is 0: the mask is the constant alone.
  EXPECT_EQ(masked_crc32c(""), 0xa282ead8u);
}

}  // namespace
}  // namespace vkp::callbacks
