// Cifar10 and Cifar100 on files written here in the CIFAR binary format.
#include "dataflow/cifar.h"

#include <gtest/gtest.h>

#include <fstream>

#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

// Record r: labels as given by `labels(r)`, then planes R, G, B with
// R = (r + p) % 256, G = p % 251, B = 255 - p % 256 at pixel p = y * 32 + x.
template <class Labels>
void write_cifar(const std::filesystem::path& path, std::size_t records, Labels&& labels) {
  std::vector<std::uint8_t> bytes;
  for (std::size_t r = 0; r < records; ++r) {
    for (std::uint8_t l : labels(r)) bytes.push_back(l);
    for (std::size_t p = 0; p < 1024; ++p) bytes.push_back(static_cast<std::uint8_t>((r + p) % 256));
    for (std::size_t p = 0; p < 1024; ++p) bytes.push_back(static_cast<std::uint8_t>(p % 251));
    for (std::size_t p = 0; p < 1024; ++p) bytes.push_back(static_cast<std::uint8_t>(255 - p % 256));
  }
  std::filesystem::create_directories(path.parent_path());
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

std::vector<std::uint8_t> cifar10_label(std::size_t r) { return {static_cast<std::uint8_t>(r % 10)}; }

TEST(Cifar10, ReadsHwcImagesAndLabelsFromTheBatchesFolder) {
  TempDir dir;
  write_cifar(dir.path() / "cifar-10-batches-bin" / "test_batch.bin", 10000, cifar10_label);
  Cifar10 df(dir.path(), Split::test, {.shuffle = false});
  EXPECT_EQ(df.size(), 10000u);
  df.reset_state();
  df.next();
  df.next();
  df.next();
  const Datapoint dp = *df.next();  // record 3
  EXPECT_EQ(describe(dp[0]), "u8[32, 32, 3]");
  EXPECT_EQ(value_of(dp[1]), 3);
  const std::span<const std::uint8_t> img = dp[0].data<std::uint8_t>();
  const std::size_t y = 1, x = 2, p = y * 32 + x;
  EXPECT_EQ(img[(y * 32 + x) * 3 + 0], (3 + p) % 256);
  EXPECT_EQ(img[(y * 32 + x) * 3 + 1], p % 251);
  EXPECT_EQ(img[(y * 32 + x) * 3 + 2], 255 - p % 256);
}

TEST(Cifar10, MissingTrainBatchIsNamed) {
  TempDir dir;
  const std::string message = error_message([&] { Cifar10(dir.path(), Split::train); }, ErrorCode::io);
  EXPECT_NE(message.find("Cifar10 train: no file found; looked for"), std::string::npos) << message;
  EXPECT_NE(message.find("data_batch_1.bin"), std::string::npos) << message;
}

TEST(Cifar10, TruncatedFileAndWrongCountAreReported) {
  TempDir dir;
  const std::filesystem::path file = dir.path() / "test_batch.bin";
  write_cifar(file, 10, cifar10_label);
  std::filesystem::resize_file(file, std::filesystem::file_size(file) - 7);
  std::string message = error_message([&] { Cifar10(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("test_batch.bin: truncated: 30723 bytes is not a whole number of 3073-byte records "
                         "(9 records and 3066 bytes)"),
            std::string::npos)
      << message;
  write_cifar(file, 10, cifar10_label);
  message = error_message([&] { Cifar10(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("test_batch.bin: count mismatch: 10 records, expected 10000"), std::string::npos) << message;
}

TEST(Cifar10, LabelOutOfRangeNamesTheRecord) {
  TempDir dir;
  write_cifar(dir.path() / "test_batch.bin", 10000, [](std::size_t r) {
    return std::vector<std::uint8_t>{static_cast<std::uint8_t>(r == 4321 ? 10 : 0)};
  });
  const std::string message = error_message([&] { Cifar10(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("record 4321 has label 10, out of range [0, 10)"), std::string::npos) << message;
}

TEST(Cifar100, FineAndCoarseLabels) {
  TempDir dir;
  write_cifar(dir.path() / "cifar-100-binary" / "test.bin", 10000, [](std::size_t r) {
    return std::vector<std::uint8_t>{static_cast<std::uint8_t>(r % 20), static_cast<std::uint8_t>(r % 100)};
  });
  Cifar100 fine(dir.path(), Split::test, {.shuffle = false});
  Cifar100 coarse(dir.path(), Split::test, {.shuffle = false}, true);
  fine.reset_state();
  coarse.reset_state();
  const std::vector<int> f = epoch_values(fine, 1), c = epoch_values(coarse, 1);
  ASSERT_EQ(f.size(), 10000u);
  EXPECT_EQ(f[57], 57);
  EXPECT_EQ(c[57], 17);
  EXPECT_EQ(fine.data()->num_classes, 100);
  EXPECT_EQ(coarse.data()->num_classes, 20);
}

TEST(Cifar100, ExpectsFiftyThousandTrainRecords) {
  TempDir dir;
  write_cifar(dir.path() / "train.bin", 10000, [](std::size_t) { return std::vector<std::uint8_t>{0, 0}; });
  const std::string message = error_message([&] { Cifar100(dir.path(), Split::train); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("train.bin: count mismatch: 10000 records, expected 50000"), std::string::npos) << message;
}

}  // namespace
}  // namespace vkp::dataflow
