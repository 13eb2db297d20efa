#include "dataflow/record_file.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <fstream>

#include "test_flows.h"
#include "dataflow/fake_data.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

DataFlowPtr mixed_data(std::size_t n) {
  return std::make_unique<FakeData>(std::vector<Shape>{Shape{3, 4, 2}, Shape{}, Shape{0}, Shape{5}},
                                    FakeDataOptions{.size = n,
                                                    .dtypes = {DType::f32, DType::i32, DType::f32, DType::u8},
                                                    .low = 0,
                                                    .high = 200,
                                                    .seed = 3});
}

std::vector<Datapoint> all_of(DataFlow& df) {
  if (!df.is_reset()) df.reset_state();
  std::vector<Datapoint> out;
  for (Datapoint& dp : df.epoch()) out.push_back(std::move(dp));
  return out;
}

void expect_same(const std::vector<Datapoint>& a, const std::vector<Datapoint>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].size(), b[i].size()) << i;
    for (std::size_t c = 0; c < a[i].size(); ++c) {
      EXPECT_EQ(describe(a[i][c]), describe(b[i][c])) << i << " " << c;
      EXPECT_TRUE(std::equal(a[i][c].bytes().begin(), a[i][c].bytes().end(), b[i][c].bytes().begin(),
                             b[i][c].bytes().end()))
          << i << " " << c;
    }
  }
}

std::vector<char> read_all(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  return std::vector<char>(std::istreambuf_iterator<char>(in), {});
}

void write_all(const std::filesystem::path& p, const std::vector<char>& bytes) {
  std::ofstream(p, std::ios::binary).write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
}

TEST(RecordFile, RoundTripsEveryDtypeAndShapeAndLeavesNoTemporaryFile) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data.vkrec";
  DataFlowPtr source = mixed_data(25);
  EXPECT_EQ(write_record_file(*source, path), 25u);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "data.vkrec.tmp"));
  RecordFileData back(path);
  EXPECT_EQ(back.size(), 25u);
  DataFlowPtr again = mixed_data(25);
  const std::vector<Datapoint> want = all_of(*again);
  const std::vector<Datapoint> got = all_of(back);
  expect_same(got, want);
  expect_same(all_of(back), want);  // a second epoch reads the file again
}

TEST(RecordFile, EmptyFlowGivesAnEmptyFile) {
  TempDir dir;
  DataFlowPtr empty = range_flow(0);
  EXPECT_EQ(write_record_file(*empty, dir.path() / "empty"), 0u);
  RecordFileData back(dir.path() / "empty");
  back.reset_state();
  EXPECT_EQ(back.size(), 0u);
  EXPECT_FALSE(back.next());
}

TEST(RecordFile, ARankTheFormatCannotHoldIsRefusedAndNoFileIsLeft) {
  TempDir dir;
  Datapoint deep{Array(DType::u8, Shape(std::vector<std::int64_t>(256, 1)))};
  DataFromList flow({deep}, /*shuffle=*/false);
  try {
    write_record_file(flow, dir.path() / "deep");
    FAIL() << "a rank of 256 was written as a byte";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("rank 256"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "deep"));
}

TEST(RecordFile, ACorruptedRecordIsReportedWithItsIndex) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  DataFlowPtr source = mixed_data(10);
  write_record_file(*source, path);
  std::vector<char> bytes = read_all(path);
  // Every record has the same size here: flip one payload byte in record 6.
  const std::size_t record = (bytes.size() - 32) / 10;
  bytes[32 + 6 * record + 40] ^= 0x10;
  write_all(path, bytes);
  RecordFileData back(path);
  back.reset_state();
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(back.next());
  const std::string message = error_message([&] { back.next(); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("record 6 (at byte " + std::to_string(32 + 6 * record) + "): checksum mismatch"),
            std::string::npos)
      << message;
}

TEST(RecordFile, ACorruptedLengthIsCaughtBeforeItIsTrusted) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  DataFlowPtr source = mixed_data(3);
  write_record_file(*source, path);
  std::vector<char> bytes = read_all(path);
  bytes[32 + 5] = 0x7f;  // record 0's length becomes huge
  write_all(path, bytes);
  RecordFileData back(path);
  back.reset_state();
  const std::string message = error_message([&] { back.next(); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("record 0 (at byte 32): checksum mismatch in its length field"), std::string::npos) << message;
}

TEST(RecordFile, AMalformedPayloadWithAValidChecksumIsStillCaught) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  DataFlowPtr source = range_flow(1);
  write_record_file(*source, path);
  std::vector<char> bytes = read_all(path);
  // Record 0: head at 32 (length u64, crc u32, crc u32), payload at 48: u32 count, then
  // the first component's dtype code.
  const std::size_t payload = 48, length = bytes.size() - payload;
  bytes[payload + 4] = 9;
  const auto crc = static_cast<std::uint32_t>(
      crc32(0L, reinterpret_cast<const Bytef*>(bytes.data() + payload), static_cast<uInt>(length)));
  for (int i = 0; i < 4; ++i) bytes[40 + static_cast<std::size_t>(i)] = static_cast<char>(crc >> (8 * i));
  write_all(path, bytes);
  RecordFileData back(path);
  back.reset_state();
  const std::string message = error_message([&] { back.next(); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("record 0 (at byte 32): malformed payload: component 0 has unknown dtype code 9"),
            std::string::npos)
      << message;
}

TEST(RecordFile, TruncationAndTrailingBytesAreReported) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  DataFlowPtr source = mixed_data(4);
  write_record_file(*source, path);
  const std::vector<char> bytes = read_all(path);
  write_all(path, std::vector<char>(bytes.begin(), bytes.end() - 10));
  RecordFileData cut(path);
  cut.reset_state();
  for (int i = 0; i < 3; ++i) ASSERT_TRUE(cut.next());
  std::string message = error_message([&] { cut.next(); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("truncated: record 3"), std::string::npos) << message;

  std::vector<char> longer = bytes;
  longer.push_back(0);
  write_all(path, longer);
  RecordFileData extra(path);
  extra.reset_state();
  for (int i = 0; i < 4; ++i) ASSERT_TRUE(extra.next());
  message = error_message([&] { extra.next(); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("malformed: 1 bytes after the last of 4 records"), std::string::npos) << message;
}

TEST(RecordFile, BadHeadersAndMissingFiles) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  EXPECT_NE(error_message([&] { RecordFileData{path}; }, ErrorCode::io).find("cannot open record file"),
            std::string::npos);
  DataFlowPtr source = mixed_data(1);
  write_record_file(*source, path);
  std::vector<char> bytes = read_all(path);
  bytes[8] = 2;  // version 2, header checksum now wrong too
  write_all(path, bytes);
  EXPECT_NE(error_message([&] { RecordFileData{path}; }, ErrorCode::bad_data).find("header checksum mismatch"),
            std::string::npos);
  bytes[0] = 'X';
  write_all(path, bytes);
  EXPECT_NE(error_message([&] { RecordFileData{path}; }, ErrorCode::bad_data).find("wrong magic"), std::string::npos);
  write_all(path, std::vector<char>(bytes.begin(), bytes.begin() + 10));
  EXPECT_NE(error_message([&] { RecordFileData{path}; }, ErrorCode::bad_data).find("short read"), std::string::npos);
}

TEST(RecordFile, AFailingFlowLeavesTheOldFileInPlace) {
  TempDir dir;
  const std::filesystem::path path = dir.path() / "data";
  DataFlowPtr good = range_flow(3);
  write_record_file(*good, path);
  DataFromGenerator failing([] {
    return DataFromGenerator::Generator([i = 0]() mutable -> std::optional<Datapoint> {
      if (i == 2) throw Error(ErrorCode::io, "source died");
      return Datapoint{scalar(i++)};
    });
  });
  EXPECT_THROW(write_record_file(failing, path), Error);
  EXPECT_FALSE(std::filesystem::exists(dir.path() / "data.tmp"));
  RecordFileData back(path);
  back.reset_state();
  EXPECT_EQ(epoch_values(back), iota_values(3));
}

TEST(RecordFile, UnwritableDestinationIsAnIoError) {
  DataFlowPtr df = range_flow(1);
  const std::string message =
      error_message([&] { write_record_file(*df, "/nonexistent-dir/sub/file"); }, ErrorCode::io);
  EXPECT_NE(message.find("cannot create /nonexistent-dir/sub/file.tmp"), std::string::npos) << message;
}

}  // namespace
}  // namespace vkp::dataflow
