// TFRecord framing: the masked CRC worked by hand from the catalogue check value of
// CRC-32C (core/crc32c.h, tested against the published vectors in crc32c_test.cpp), the
// framing laid out byte by byte, and every kind of damage reported with its record.
#include "core/tfrecord.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "core/error.h"

namespace vkp {
namespace {

TEST(MaskedCrc32c, MasksAsTFRecordDoes) {
  // ((crc >> 15) | (crc << 17)) + 0xa282ead8, by hand for crc("123456789") = 0xE3069283:
  // rotate right 15 -> 0x2507C60D, plus 0xa282ead8 -> 0xC78AB0E5.
  EXPECT_EQ(masked_crc32c("123456789"), 0xC78AB0E5u);
  // crc of "" is 0: the mask is the constant alone.
  EXPECT_EQ(masked_crc32c(""), 0xa282ead8u);
}

class TFRecordFile : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("vkpack-tfrecord-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".tfrecord");
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  std::string bytes() const {
    std::ifstream in(path_, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
  }
  void overwrite(const std::string& content) const { std::ofstream(path_, std::ios::binary) << content; }
  // The Error(bad_data) reading every record of the file, or "" when it reads clean.
  std::string damage() const {
    try {
      TFRecordReader reader(path_);
      while (reader.next()) {
      }
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::bad_data) << e.what();
      return e.what();
    }
    return "";
  }
  void write_three() const {
    TFRecordWriter writer(path_.string());
    writer.write("123456789");
    writer.write("");
    writer.write(std::string(1000, 'x'));
    writer.close();
  }

  std::filesystem::path path_;
};

TEST_F(TFRecordFile, TheFramingIsLaidOutByteByByte) {
  {
    TFRecordWriter writer(path_.string());
    writer.write("123456789");
  }
  const std::string got = bytes();
  ASSERT_EQ(got.size(), 8u + 4 + 9 + 4);
  std::uint64_t length = 0;
  std::uint32_t data_crc = 0;
  std::memcpy(&length, got.data(), 8);
  std::memcpy(&data_crc, got.data() + 21, 4);
  EXPECT_EQ(length, 9u);
  EXPECT_EQ(got.substr(12, 9), "123456789");
  EXPECT_EQ(data_crc, 0xC78AB0E5u);
}

TEST_F(TFRecordFile, RecordsComeBackInOrderAndAgainAfterRewind) {
  write_three();
  TFRecordReader reader(path_);
  for (int pass = 0; pass < 2; ++pass) {
    EXPECT_EQ(reader.next(), "123456789");
    EXPECT_EQ(reader.next(), "");
    EXPECT_EQ(reader.next(), std::string(1000, 'x'));
    EXPECT_EQ(reader.index(), 3u);
    EXPECT_EQ(reader.next(), std::nullopt);
    reader.rewind();
  }
}

TEST_F(TFRecordFile, AnEmptyFileHoldsNoRecords) {
  overwrite("");
  TFRecordReader reader(path_);
  EXPECT_EQ(reader.next(), std::nullopt);
}

TEST_F(TFRecordFile, DamageIsReportedWithItsRecordAndOffset) {
  write_three();
  const std::string good = bytes();
  const std::size_t third = 2 * (8 + 4 + 4) + 9;  // byte offset of record 2
  std::string flipped = good;
  flipped[third + 12 + 500] ^= 1;  // a byte of record 2's data
  overwrite(flipped);
  EXPECT_NE(damage().find("record 2 at byte " + std::to_string(third) + ": the data's CRC"), std::string::npos);
  flipped = good;
  flipped[25 + 3] ^= 0x40;  // record 1's length
  overwrite(flipped);
  EXPECT_NE(damage().find("record 1 at byte 25: the length's CRC"), std::string::npos) << damage();
  overwrite(good.substr(0, good.size() - 2));  // cut inside the last CRC
  EXPECT_NE(damage().find("record 2"), std::string::npos) << damage();
  overwrite(good.substr(0, 20));  // cut inside record 0's data
  EXPECT_NE(damage().find("record 0 at byte 0"), std::string::npos) << damage();
  overwrite(good + "junk");  // bytes after the last record
  EXPECT_NE(damage().find("record 3"), std::string::npos) << damage();
  overwrite(good);
  EXPECT_EQ(damage(), "");
}

TEST_F(TFRecordFile, ALengthPastTheEndIsRefusedBeforeAnyAllocation) {
  std::string forged(8 + 4, '\0');
  const std::uint64_t huge = std::uint64_t{1} << 60;
  std::memcpy(forged.data(), &huge, 8);
  const std::uint32_t crc = masked_crc32c(std::string_view(forged.data(), 8));
  std::memcpy(forged.data() + 8, &crc, 4);
  overwrite(forged + std::string(4, '\0'));
  EXPECT_NE(damage().find("runs past the end"), std::string::npos) << damage();
}

TEST_F(TFRecordFile, TheWriterNeverOverwritesAFile) {
  overwrite("keep");
  EXPECT_THROW(TFRecordWriter{path_.string()}, Error);
  EXPECT_EQ(bytes(), "keep");
}

}  // namespace
}  // namespace vkp
