// CRC-32C against published check values: the CRC catalogue's check value for
// "123456789" and the iSCSI test vectors of RFC 3720, appendix B.4.
#include "callbacks/monitors/crc32c.h"

#include <gtest/gtest.h>

#include <string>

namespace vkp::callbacks {
namespace {

TEST(Crc32c, MatchesTheCatalogueCheckValue) {
  EXPECT_EQ(crc32c(std::string_view("123456789")), 0xE3069283u);
  EXPECT_EQ(crc32c(std::string_view("")), 0u);
}

TEST(Crc32c, MatchesTheIscsiTestVectorsOfRfc3720) {
  std::string zeros(32, '\0'), ones(32, '\xff'), ascending(32, '\0'), descending(32, '\0');
  for (int i = 0; i < 32; ++i) {
    ascending[i] = static_cast<char>(i);
    descending[i] = static_cast<char>(31 - i);
  }
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
}

TEST(Crc32c, ContinuesFromTheCrcOfThePrecedingBytes) {
  const std::string text = "The quick brown fox jumps over the lazy dog";
  for (std::size_t cut : {std::size_t{0}, std::size_t{1}, std::size_t{17}, text.size()})
    EXPECT_EQ(crc32c(std::string_view(text).substr(cut), crc32c(std::string_view(text).substr(0, cut))), crc32c(text))
        << "cut at " << cut;
  EXPECT_EQ(crc32c(text), 0x22620404u);
}

TEST(Crc32c, MaskedAsTFRecordMasksIt) {
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, by hand for crc = 0xE3069283:
  // rotate right 15 -> 0x2507C60D, plus 0xa282ead8 -> 0xC78AB0E5.
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
  // crc of "" is 0: the mask is the constant alone.
  EXPECT_EQ(masked_crc32c(""), 0xa282ead8u);
}

}  // namespace
}  // namespace vkp::callbacks
