// CRC-32C against published check values, and the slicing path against the bytewise one.
#include "core/crc32c.h"

#include <gtest/gtest.h>

#include <string_view>
#include <vector>

#include "core/rng.h"

namespace vkp {
namespace {

std::span<const std::byte> bytes_of(std::string_view s) { return std::as_bytes(std::span(s.data(), s.size())); }

// The catalogue check value of CRC-32C and the test vectors of RFC 3720, section B.4.
TEST(Crc32c, MatchesThePublishedCheckValues) {
  EXPECT_EQ(crc32c(bytes_of("123456789")), 0xE3069283u);
  const std::vector<std::byte> zeros(32, std::byte{0}), ones(32, std::byte{0xFF});
  EXPECT_EQ(crc32c(zeros), 0x8A9136AAu);
  EXPECT_EQ(crc32c(ones), 0x62A8AB43u);
  std::vector<std::byte> ascending(32), descending(32);
  for (int i = 0; i < 32; ++i) {
    ascending[static_cast<std::size_t>(i)] = std::byte(i);
    descending[static_cast<std::size_t>(i)] = std::byte(31 - i);
  }
  EXPECT_EQ(crc32c(ascending), 0x46DD794Eu);
  EXPECT_EQ(crc32c(descending), 0x113FDB5Cu);
  EXPECT_EQ(crc32c({}), 0u);
}

// Any split of the input gives the CRC of the whole; one flipped bit changes it.
TEST(Crc32c, ContinuesAcrossPiecesAndSeesEveryBit) {
  Rng rng(3);
  std::vector<std::byte> data(1001);
  for (std::byte& b : data) b = std::byte(rng.below(256));
  const std::uint32_t whole = crc32c(data);
  for (std::size_t cut : {0u, 1u, 7u, 8u, 9u, 500u, 1000u, 1001u}) {
    const std::span<const std::byte> all(data);
    EXPECT_EQ(crc32c(all.subspan(cut), crc32c(all.first(cut))), whole) << cut;
  }
  for (std::size_t bit : {0u, 13u, 4000u, 8007u}) {
    std::vector<std::byte> flipped = data;
    flipped[bit / 8] ^= std::byte(1u << (bit % 8));
    EXPECT_NE(crc32c(flipped), whole) << bit;
  }
}

}  // namespace
}  // namespace vkp
