// Little-endian integers against bytes written out by hand.
#include "core/little_endian.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace vkp {
namespace {

TEST(LittleEndian, ReadsAndWritesTheLowByteFirst) {
  const std::uint8_t bytes[] = {0x78, 0x56, 0x34, 0x12, 0xf0, 0xde, 0xbc, 0x9a};
  EXPECT_EQ(load_le<std::uint16_t>(bytes), 0x5678u);
  EXPECT_EQ(load_le<std::uint32_t>(bytes), 0x12345678u);
  EXPECT_EQ(load_le<std::uint64_t>(bytes), 0x9abcdef012345678ull);
  EXPECT_EQ(load_le<std::int64_t>(bytes), static_cast<std::int64_t>(0x9abcdef012345678ull));  // negative
  const std::byte as_bytes[] = {std::byte{0xff}, std::byte{0xff}, std::byte{0xff}, std::byte{0xff}};
  EXPECT_EQ(load_le<std::int32_t>(as_bytes), -1);
  std::string s;
  append_le<std::uint32_t>(s, 0x12345678u);
  append_le<std::int16_t>(s, -2);
  EXPECT_EQ(s, std::string("\x78\x56\x34\x12\xfe\xff", 6));
  std::vector<std::uint8_t> v;
  append_le<std::uint64_t>(v, 0x0102030405060708ull);
  EXPECT_EQ(v, (std::vector<std::uint8_t>{8, 7, 6, 5, 4, 3, 2, 1}));
  std::byte out[8];
  store_le(out, std::uint64_t{0x9abcdef012345678ull});
  EXPECT_EQ(load_le<std::uint64_t>(out), 0x9abcdef012345678ull);
}

}  // namespace
}  // namespace vkp
