// Mnist / FashionMnist on the real Fashion-MNIST files, and on broken files.
#include "dataflow/mnist.h"

#include <gtest/gtest.h>
#include <zlib.h>

#include <array>
#include <fstream>
#include <numeric>

#include "dataflow/internal/idx_file.h"
#include "test_flows.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

std::array<int, 10> label_histogram(DataFlow& df) {
  std::array<int, 10> histogram{};
  for (const Datapoint& dp : df.epoch()) ++histogram.at(static_cast<std::size_t>(value_of(dp[1])));
  return histogram;
}

TEST(FashionMnist, TrainSplitHas60000ImagesAnd6000PerClass) {
  FashionMnist df(Split::train, {.shuffle = false});
  EXPECT_EQ(df.size(), 60000u);
  EXPECT_EQ(fashion_mnist_images(Split::train), 60000);
  EXPECT_EQ(fashion_mnist_images(Split::test), 10000);
  df.reset_state();
  const std::optional<Datapoint> first = df.next();
  ASSERT_TRUE(first);
  EXPECT_EQ(describe((*first)[0]), "u8[28, 28, 1]");
  EXPECT_EQ(describe((*first)[1]), "i32[]");
  EXPECT_EQ(value_of((*first)[1]), 9);  // an ankle boot
  const std::span<const std::uint8_t> pixels = (*first)[0].data<std::uint8_t>();
  EXPECT_EQ(std::accumulate(pixels.begin(), pixels.end(), 0), 76247);
  EXPECT_EQ(pixels[14 * 28 + 12], 237);
  std::array<int, 10> want;
  want.fill(6000);
  EXPECT_EQ(label_histogram(df), want);
}

TEST(FashionMnist, TestSplitHas10000ImagesAnd1000PerClass) {
  FashionMnist df(Split::test, {.shuffle = false});
  EXPECT_EQ(df.size(), 10000u);
  df.reset_state();
  std::array<int, 10> want;
  want.fill(1000);
  EXPECT_EQ(label_histogram(df), want);
  df.start_epoch();
  std::vector<int> first_labels;
  for (int i = 0; i < 10; ++i) first_labels.push_back(value_of(df.next()->at(1)));
  EXPECT_EQ(first_labels, (std::vector<int>{9, 2, 1, 1, 6, 1, 4, 6, 5, 7}));
}

TEST(FashionMnist, F32ImagesAreScaledToTheUnitIntervalAndShuffleIsSeeded) {
  FashionMnist a(Split::test, {.shuffle = true, .dtype = DType::f32, .seed = 5});
  FashionMnist b(Split::test, {.shuffle = true, .dtype = DType::f32, .seed = 5});
  a.reset_state();
  b.reset_state();
  float lo = 1, hi = 0;
  for (int i = 0; i < 50; ++i) {
    const Datapoint x = *a.next(), y = *b.next();
    EXPECT_EQ(describe(x[0]), "f32[28, 28, 1]");
    EXPECT_EQ(value_of(x[1]), value_of(y[1]));
    for (float v : x[0].data<float>()) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  EXPECT_EQ(lo, 0.0f);
  EXPECT_EQ(hi, 1.0f);
}

// Big-endian IDX u8 file: magic, extents, bytes.
std::vector<std::uint8_t> idx_bytes(std::uint32_t magic, const std::vector<std::uint32_t>& dims, std::size_t data_bytes,
                                    std::uint8_t fill = 1) {
  std::vector<std::uint8_t> out;
  const auto put = [&out](std::uint32_t v) {
    for (int s = 24; s >= 0; s -= 8) out.push_back(static_cast<std::uint8_t>(v >> s));
  };
  put(magic);
  for (std::uint32_t d : dims) put(d);
  out.insert(out.end(), data_bytes, fill);
  return out;
}

void write_plain(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

void write_gzip(const std::filesystem::path& path, const std::vector<std::uint8_t>& bytes) {
  gzFile f = gzopen(path.c_str(), "wb");
  ASSERT_NE(f, nullptr);
  ASSERT_EQ(gzwrite(f, bytes.data(), static_cast<unsigned>(bytes.size())), static_cast<int>(bytes.size()));
  gzclose(f);
}

// A small valid test split: 5 images, labels 0..4, uncompressed.
void write_small_split(const std::filesystem::path& dir) {
  write_plain(dir / "t10k-images-idx3-ubyte", idx_bytes(0x803, {5, 28, 28}, 5 * 784, 200));
  std::vector<std::uint8_t> labels = idx_bytes(0x801, {5}, 0);
  for (std::uint8_t l = 0; l < 5; ++l) labels.push_back(l);
  write_plain(dir / "t10k-labels-idx1-ubyte", labels);
}

TEST(Mnist, ReadsUncompressedFilesToo) {
  TempDir dir;
  write_small_split(dir.path());
  Mnist df(dir.path(), Split::test, {.shuffle = false});
  EXPECT_EQ(df.size(), 5u);
  df.reset_state();
  EXPECT_EQ(epoch_values(df, 1), iota_values(5));
}

// The count from the header alone (what the examples size an epoch by) equals what
// loading the split finds, gzipped or not; a file that is no IDX images file is refused.
TEST(Mnist, ImagesCountsFromTheHeader) {
  TempDir dir;
  write_small_split(dir.path());
  write_gzip(dir.path() / "train-images-idx3-ubyte.gz", idx_bytes(0x803, {7, 28, 28}, 7 * 784));
  EXPECT_EQ(mnist_images(dir.path(), Split::test), 5);
  EXPECT_EQ(mnist_images(dir.path(), Split::train), 7);
  EXPECT_EQ(static_cast<std::int64_t>(*Mnist(dir.path(), Split::test).size()), mnist_images(dir.path(), Split::test));
  write_plain(dir.path() / "t10k-images-idx3-ubyte", idx_bytes(0x801, {5}, 5));
  const std::string message = error_message([&] { mnist_images(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("t10k-images-idx3-ubyte does not start as an IDX file of u8 images"), std::string::npos)
      << message;
  error_message([&] { mnist_images(dir.path() / "nowhere", Split::test); }, ErrorCode::io);
}

TEST(Mnist, MissingFilesNameWhatWasLookedFor) {
  TempDir dir;
  const std::string message = error_message([&] { Mnist(dir.path() / "nowhere", Split::train); }, ErrorCode::io);
  EXPECT_NE(message.find("Mnist train images: no file found; looked for"), std::string::npos) << message;
  EXPECT_NE(message.find("nowhere/train-images-idx3-ubyte.gz"), std::string::npos) << message;
}

TEST(Mnist, WrongMagicIsReportedWithTheFile) {
  TempDir dir;
  write_small_split(dir.path());
  write_plain(dir.path() / "t10k-labels-idx1-ubyte", idx_bytes(0x803, {5, 1, 1}, 5));
  const std::string message = error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("t10k-labels-idx1-ubyte: wrong magic 0x00000803, expected 0x00000801"), std::string::npos)
      << message;
}

TEST(Mnist, ShortReadSaysHowManyBytesWereThere) {
  TempDir dir;
  write_small_split(dir.path());
  write_plain(dir.path() / "t10k-images-idx3-ubyte", idx_bytes(0x803, {5, 28, 28}, 4 * 784 + 100));
  const std::string message = error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("t10k-images-idx3-ubyte: short read: the header says 5 x 28 x 28 = 3920 bytes of data, "
                         "the file has 3236"),
            std::string::npos)
      << message;
  write_plain(dir.path() / "t10k-images-idx3-ubyte", {0, 0, 8});
  EXPECT_NE(error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data).find("short read: 3 bytes"),
            std::string::npos);
}

TEST(Mnist, CountMismatchNamesBothFiles) {
  TempDir dir;
  write_small_split(dir.path());
  write_plain(dir.path() / "t10k-labels-idx1-ubyte", idx_bytes(0x801, {4}, 4, 0));
  const std::string message = error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("count mismatch"), std::string::npos) << message;
  EXPECT_NE(message.find("t10k-images-idx3-ubyte holds 5 images"), std::string::npos) << message;
  EXPECT_NE(message.find("t10k-labels-idx1-ubyte holds 4 labels"), std::string::npos) << message;
}

TEST(Mnist, LabelOutOfRangeAndTrailingBytesAreErrors) {
  TempDir dir;
  write_small_split(dir.path());
  std::vector<std::uint8_t> labels = idx_bytes(0x801, {5}, 0);
  for (std::uint8_t l : {0, 1, 11, 3, 4}) labels.push_back(l);
  write_plain(dir.path() / "t10k-labels-idx1-ubyte", labels);
  EXPECT_NE(error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data)
                .find("label 11 of item 2 is out of range [0, 10)"),
            std::string::npos);
  labels[10] = 2;
  labels.push_back(7);
  write_plain(dir.path() / "t10k-labels-idx1-ubyte", labels);
  EXPECT_NE(error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data)
                .find("malformed: 1 bytes after the 5 = 5 bytes of data"),
            std::string::npos);
}

TEST(Mnist, TruncatedGzipIsReportedNotReadShort) {
  TempDir dir;
  write_small_split(dir.path());
  const std::filesystem::path gz = dir.path() / "t10k-images-idx3-ubyte.gz";
  std::vector<std::uint8_t> random_images = idx_bytes(0x803, {5, 28, 28}, 0);
  Rng rng(1);
  for (int i = 0; i < 5 * 784; ++i) random_images.push_back(static_cast<std::uint8_t>(rng.next_u32()));
  write_gzip(gz, random_images);
  {
    Mnist ok(dir.path(), Split::test);  // the .gz is preferred and valid
    EXPECT_EQ(ok.size(), 5u);
  }
  std::filesystem::resize_file(gz, std::filesystem::file_size(gz) / 2);
  const std::string message = error_message([&] { Mnist(dir.path(), Split::test); }, ErrorCode::bad_data);
  EXPECT_NE(message.find("t10k-images-idx3-ubyte.gz: the gzip stream is truncated or corrupt"), std::string::npos)
      << message;
}

TEST(IdxFile, ParsesExtentsAndData) {
  std::vector<std::uint8_t> bytes = idx_bytes(0x802, {2, 3}, 0);
  for (std::uint8_t v = 0; v < 6; ++v) bytes.push_back(v);
  const IdxBytes idx = parse_idx_u8(bytes, 2, "memory");
  EXPECT_EQ(idx.dims, (std::vector<std::int64_t>{2, 3}));
  EXPECT_EQ(idx.data, (std::vector<std::uint8_t>{0, 1, 2, 3, 4, 5}));
}

}  // namespace
}  // namespace vkp::dataflow
