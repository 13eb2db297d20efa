// Image files against OpenCV (images_cv2.py, Debian's python3-opencv): PNGs and a JPEG
// OpenCV wrote decode to its pixels, a PNG vkpack writes is read by OpenCV as written;
// truncated and missing files are errors naming them; ImageFolder finds classes and
// labels, ImageList reads list files; image_grid tiles; vkpack's JPEG (JpegNoise) reads
// in OpenCV.
#include "core/image_file.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include "core/error.h"
#include "dataflow/image_from_file.h"
#include "dataflow/jpeg_noise.h"

namespace vkp::dataflow {
namespace {

std::uint8_t pattern(std::int64_t y, std::int64_t x, std::int64_t c, int seed = 0) {
  return static_cast<std::uint8_t>((37 * y + 11 * x + 71 * c + seed) % 256);
}

int run(const std::string& args) {
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_IMAGES_CV2 + " " + args;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class ImageFiles : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = (std::filesystem::temp_directory_path() / ("vkpack-images-" + std::to_string(getpid()))).string();
    std::filesystem::create_directories(dir_);
    ASSERT_EQ(run("write " + dir_), 0);
  }
  static void TearDownTestSuite() { std::filesystem::remove_all(dir_); }
  static std::string dir_;
};
std::string ImageFiles::dir_;

void expect_pattern(const Array& image, std::int64_t h, std::int64_t w, std::int64_t c, int seed = 0, int slack = 0) {
  ASSERT_EQ(image.dtype(), DType::u8);
  ASSERT_EQ(image.shape().dims(), (std::vector<std::int64_t>{h, w, c}));
  int worst = 0;
  for (std::int64_t y = 0; y < h; ++y)
    for (std::int64_t x = 0; x < w; ++x)
      for (std::int64_t k = 0; k < c; ++k)
        worst = std::max(worst, std::abs(int(image.data<std::uint8_t>()[static_cast<std::size_t>((y * w + x) * c + k)]) -
                                         int(pattern(y, x, k, seed))));
  EXPECT_LE(worst, slack);
}

TEST_F(ImageFiles, DecodesWhatOpenCvWrote) {
  expect_pattern(read_image(dir_ + "/rgb.png"), 5, 7, 3);
  expect_pattern(read_image(dir_ + "/rgba.png"), 3, 4, 4);
  expect_pattern(read_image(dir_ + "/gray.png"), 4, 6, 1);
  // A JPEG: lossy, so compared with OpenCV's decoding of the same file; two decoders
  // differ by rounding in the inverse DCT and chroma upsampling.
  const Array jpeg = read_image(dir_ + "/rgb.jpg");
  ASSERT_EQ(jpeg.shape().dims(), (std::vector<std::int64_t>{5, 7, 3}));
  std::ifstream raw(dir_ + "/rgb.jpg.opencv", std::ios::binary);
  const std::string opencv((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  ASSERT_EQ(opencv.size(), jpeg.nbytes());
  int worst = 0;
  for (std::size_t i = 0; i < jpeg.nbytes(); ++i)
    worst = std::max(worst, std::abs(int(jpeg.data<std::uint8_t>()[i]) - int(static_cast<unsigned char>(opencv[i]))));
  EXPECT_LE(worst, 8) << "stb and OpenCV decode the JPEG this far apart";
  // Channels converted on request: RGBA to RGB drops alpha; gray to RGB repeats it.
  expect_pattern(read_image(dir_ + "/rgba.png", 3), 3, 4, 3);
  const Array gray3 = read_image(dir_ + "/gray.png", 3);
  EXPECT_EQ(gray3.shape().dims(), (std::vector<std::int64_t>{4, 6, 3}));
  EXPECT_EQ(gray3.data<std::uint8_t>()[3 * 7 + 2], pattern(1, 1, 0));
}

// vkpack's JPEG is a JPEG to OpenCV (what tensorpack's JpegNoise encodes with): the two
// decoders agree on it as on OpenCV's own; and JpegNoise's output is that round trip
// at a quality from its range, every quality of the range drawn.
TEST_F(ImageFiles, JpegNoiseRoundTripsThroughAJpegOpenCvReads) {
  Array image(DType::u8, Shape{24, 32, 3});
  for (std::int64_t y = 0; y < 24; ++y)
    for (std::int64_t x = 0; x < 32; ++x)
      for (std::int64_t k = 0; k < 3; ++k)
        image.data<std::uint8_t>()[static_cast<std::size_t>((y * 32 + x) * 3 + k)] = pattern(y, x, k);
  const std::string jpeg = encode_jpeg(image, 90);
  const std::string path = dir_ + "/vkpack.jpg";
  std::ofstream(path, std::ios::binary).write(jpeg.data(), static_cast<std::streamsize>(jpeg.size()));
  ASSERT_EQ(run("decode " + path), 0);
  std::ifstream raw(path + ".opencv", std::ios::binary);
  const std::string opencv((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  const Array stb = read_image(path);
  ASSERT_EQ(opencv.size(), stb.nbytes());
  int worst = 0;
  for (std::size_t i = 0; i < stb.nbytes(); ++i)
    worst = std::max(worst, std::abs(int(stb.data<std::uint8_t>()[i]) - int(static_cast<unsigned char>(opencv[i]))));
  EXPECT_LE(worst, 8) << "stb and OpenCV decode vkpack's JPEG this far apart";

  std::vector<Array> by_quality;
  for (int q = 50; q < 53; ++q) {
    const std::string bytes = encode_jpeg(image, q);
    by_quality.push_back(decode_image(std::as_bytes(std::span(bytes.data(), bytes.size())), "test", 3));
  }
  const JpegNoise noise(50, 53);
  Rng rng(4);
  std::set<int> drawn;
  for (int i = 0; i < 40; ++i) {
    const Array out = noise.apply(image, rng);
    ASSERT_EQ(out.shape(), image.shape());
    int match = -1;
    for (int q = 0; q < 3; ++q)
      if (std::equal(out.bytes().begin(), out.bytes().end(), by_quality[static_cast<std::size_t>(q)].bytes().begin()))
        match = q;
    ASSERT_GE(match, 0) << "not the round trip at any quality of the range";
    drawn.insert(match);
  }
  EXPECT_EQ(drawn, (std::set<int>{0, 1, 2}));
  // Gray [H, W] keeps its rank; float images and qualities outside [1, 100] are refused.
  Array gray(DType::u8, Shape{9, 10});
  EXPECT_EQ(noise.apply(gray, rng).shape(), gray.shape());
  EXPECT_THROW(noise.apply(Array(DType::f32, Shape{4, 4, 3}), rng), Error);
  EXPECT_THROW(encode_jpeg(image, 0), Error);
  EXPECT_THROW(JpegNoise(60, 60), Error);
}

TEST_F(ImageFiles, OpenCvReadsThePngsVkpackWrites) {
  Array rgb(DType::u8, Shape{6, 9, 3}), rgba(DType::u8, Shape{2, 5, 4});
  for (Array* a : {&rgb, &rgba}) {
    const std::int64_t w = a->shape()[1], c = a->shape()[2];
    for (std::size_t i = 0; i < a->nbytes(); ++i) {
      const auto k = static_cast<std::int64_t>(i);
      a->data<std::uint8_t>()[i] = pattern(k / c / w, k / c % w, k % c);
    }
  }
  write_png(dir_ + "/ours_rgb.png", rgb);
  write_png(dir_ + "/ours_rgba.png", rgba);
  EXPECT_EQ(run("check " + dir_ + "/ours_rgb.png"), 0);
  EXPECT_EQ(run("check " + dir_ + "/ours_rgba.png"), 0);
  expect_pattern(read_image(dir_ + "/ours_rgb.png"), 6, 9, 3);
}

TEST_F(ImageFiles, ATruncatedOrMissingFileIsAnErrorNamingIt) {
  std::ifstream in(dir_ + "/rgb.png", std::ios::binary);
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::ofstream(dir_ + "/cut.png", std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  try {
    read_image(dir_ + "/cut.png");
    FAIL() << "a truncated PNG decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find("cut.png"), std::string::npos) << e.what();
  }
  try {
    read_image(dir_ + "/nowhere.png");
    FAIL() << "a missing file decoded";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find("nowhere.png"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_image(dir_ + "/rgb.png", 2), Error);  // 2 channels cannot be asked for
}

TEST_F(ImageFiles, ImageFolderNumbersTheClassFoldersThatHoldImages) {
  ImageFolder folder(dir_ + "/folder", 3, /*shuffle=*/false);
  EXPECT_EQ(folder.classes(), (std::vector<std::string>{"cat", "dog"}));
  ASSERT_EQ(folder.size(), 3u);
  folder.reset_state();
  std::vector<std::int32_t> labels;
  int seed = 1;
  for (Datapoint& dp : folder.epoch()) {
    ASSERT_EQ(dp.size(), 2u);
    expect_pattern(dp[0], 2, 3, 3, seed++);
    labels.push_back(dp[1].data<std::int32_t>()[0]);
  }
  EXPECT_EQ(labels, (std::vector<std::int32_t>{0, 0, 1}));
  // Shuffled: every image once per epoch, the same orders for the same seed.
  const auto orders = [&](std::uint64_t s) {
    ImageFolder shuffled(dir_ + "/folder", 3, true, s);
    shuffled.reset_state();
    std::vector<std::uint8_t> firsts;
    for (int e = 0; e < 3; ++e)
      for (Datapoint& dp : shuffled.epoch()) firsts.push_back(dp[0].data<std::uint8_t>()[0]);
    return firsts;
  };
  const std::vector<std::uint8_t> seen = orders(4);
  EXPECT_EQ(seen, orders(4));
  EXPECT_EQ(std::multiset<std::uint8_t>(seen.begin(), seen.end()).count(pattern(0, 0, 0, 1)), 3u);
  EXPECT_THROW(ImageFolder(dir_ + "/nowhere"), Error);
  EXPECT_THROW(ImageFolder(dir_ + "/folder/empty"), Error);
}

// A list file of "<path> <label>" lines over the OpenCV-written folder: labels as listed,
// paths with spaces, blank lines skipped; bad lines named by file and line, paths that
// leave the root among them (what the fuzz target image_list found).
TEST_F(ImageFiles, ImageListReadsPathsAndLabelsAndNamesBadLines) {
  std::filesystem::create_directories(dir_ + "/listed");
  std::filesystem::copy_file(dir_ + "/folder/dog/c.png", dir_ + "/listed/with space.png",
                             std::filesystem::copy_options::overwrite_existing);
  const std::string list = dir_ + "/train.txt";
  std::ofstream(list) << "folder/cat/a.png 7\n\n  listed/with space.png\t2  \r\nfolder/cat/b.png 0\n";
  ImageList images(list, dir_, 3, /*shuffle=*/false);
  ASSERT_EQ(images.size(), 3u);
  images.reset_state();
  std::vector<std::int32_t> labels;
  std::vector<int> seeds;
  for (Datapoint& dp : images.epoch()) labels.push_back(dp[1].data<std::int32_t>()[0]), seeds.push_back(dp[0].data<std::uint8_t>()[0]);
  EXPECT_EQ(labels, (std::vector<std::int32_t>{7, 2, 0}));
  EXPECT_EQ(seeds, (std::vector<int>{pattern(0, 0, 0, 1), pattern(0, 0, 0, 3), pattern(0, 0, 0, 2)}));
  for (const auto& [text, part] : std::vector<std::pair<std::string, std::string>>{
           {"cat/a.png 1\ncat/b.png\n", "list.txt:2"},
           {"cat/a.png one\n", "'one' is not an integer"},
           {"cat/a.png -3\n", "'-3' is not an integer in [0, 2^31)"},
           {"cat/a.png 99999999999\n", "99999999999"},
           {"\n\n", "lists no image"},
           {"/etc/passwd 1\n", "leaves the root"},
           {"cat/../../../etc/passwd 1\n", "leaves the root"}}) {
    std::ofstream(dir_ + "/list.txt") << text;
    try {
      ImageList bad(dir_ + "/list.txt", dir_ + "/folder");
      ADD_FAILURE() << text << ": no error";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
    }
  }
  EXPECT_THROW(ImageList(dir_ + "/no-such-list.txt", dir_), Error);
  // Without a root the paths are the caller's, absolute ones included.
  std::ofstream(dir_ + "/list.txt") << dir_ << "/folder/cat/a.png 3\n";
  EXPECT_EQ(read_image_list(dir_ + "/list.txt", "").files, (std::vector<std::string>{dir_ + "/folder/cat/a.png"}));
  // A listed file that is missing is an error naming it when the flow reaches it.
  std::ofstream(dir_ + "/list.txt") << "cat/missing.png 1\n";
  ImageList missing(dir_ + "/list.txt", dir_ + "/folder");
  missing.reset_state();
  EXPECT_THROW(missing.next(), Error);
}

// decode_image(bytes, what, channels, max_bytes) must throw `code` with `part` in its message.
void expect_refused(const std::string& bytes, const std::string& what, int channels, ErrorCode code,
                    const std::string& part, std::uint64_t max_bytes = kMaxImageBytes) {
  try {
    decode_image(std::as_bytes(std::span(bytes.data(), bytes.size())), what, channels, max_bytes);
    ADD_FAILURE() << what << ": no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    EXPECT_NE(std::string(e.what()).find(part), std::string::npos) << e.what();
  }
}

// The size an image declares is checked before it is decoded, naming both sizes; the
// limit is the caller's to move.
TEST(ImageLimits, ADeclaredSizeBeyondTheLimitIsRefusedBeforeDecoding) {
  Array small(DType::u8, Shape{2, 3, 1});
  for (std::size_t i = 0; i < 6; ++i) small.data<std::uint8_t>()[i] = static_cast<std::uint8_t>(40 * i);
  const std::string png = encode_png(small);
  const auto bytes = [](const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); };
  EXPECT_EQ(decode_image(bytes(png), "small.png", 0, 6).shape(), (Shape{2, 3, 1}));
  expect_refused(png, "small.png", 0, ErrorCode::bad_data, "3 x 2 pixels (6 bytes", 5);
  expect_refused(png, "small.png", 0, ErrorCode::bad_data, "limit of 5 bytes", 5);
  // A header claiming 4000 x 4000 RGBA (64 MB) over a few bytes, against a 1 MiB limit:
  // refused by the declared size, before stb allocates or reads any pixel.
  std::string large = png;  // IHDR's width and height at bytes 16-23, big-endian
  const char side[4] = {0, 0, 0x0f, static_cast<char>(0xa0)};
  for (int i = 0; i < 8; ++i) large[16 + i] = side[i % 4];
  expect_refused(large, "large.png", 4, ErrorCode::bad_data, "4000 x 4000 pixels (64000000 bytes", 1 << 20);
}

// Found by tests/fuzz (image, in CI's five seconds): a 56-byte BMP declaring 3 x 16449282
// pixels passed the 1 GiB limit and stb spent 11 s filling 148 MB from nothing. The
// pixels a header declares must fit in the file's bytes at the format's densest.
TEST(ImageLimits, MorePixelsThanTheFileCanHoldAreRefusedBeforeDecoding) {
  const unsigned char raw[] = {
      0x42, 0x4d, 0x00, 0x00, 0x00, 0x4e, 0x00, 0x00, 0x00, 0x00, 0x36, 0x00, 0x00, 0x00, 0x28, 0x00, 0x00,
      0x00, 0x03, 0x00, 0x00, 0x00, 0x02, 0xff, 0xfa, 0x00, 0x01, 0x00, 0x18, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x01, 0x02};
  const std::string bmp(reinterpret_cast<const char*>(raw), sizeof raw);
  expect_refused(bmp, "tall.bmp", 3, ErrorCode::bad_data,
                 "declares 3 x 16449282 pixels, more than a BMP file of 56 bytes can hold (8 pixels per byte at most)");
  // A PNG header claiming 4000 x 4000 over a few dozen bytes, within max_bytes.
  Array small(DType::u8, Shape{2, 3, 1});
  std::string large = encode_png(small);
  const char side[4] = {0, 0, 0x0f, static_cast<char>(0xa0)};
  for (int i = 0; i < 8; ++i) large[16 + i] = side[i % 4];
  expect_refused(large, "large.png", 1, ErrorCode::bad_data, "4000 x 4000 pixels, more than a compressed image file of");
  // A PGM must hold its pixels outright.
  expect_refused(std::string("P5\n4 4\n255\n\x01\x02", 14), "short.pgm", 1, ErrorCode::bad_data,
                 "declares 4 x 4 pixels, more than a PNM file of 14 bytes");
}

// Found by tests/fuzz (image, UBSan): a JPEG Huffman table whose 16 counts add up to
// more than 256 codes makes stb 2.27 write past its table; refused before stb reads it.
TEST(ImageLimits, AJpegHuffmanTableOfMoreThan256CodesIsRefused) {
  std::string jpeg("\xff\xd8\xff\xc4\x00\x13\x00", 7);  // SOI, DHT of length 19: one table, class 0 id 0
  jpeg += std::string(16, '\x11');                          // 16 counts of 17: 272 codes
  expect_refused(jpeg, "huffman.jpg", 3, ErrorCode::bad_data, "a JPEG Huffman table at byte 6 declares 272 codes");
  // The same table with 16 counts of 16 (256 codes) passes this check; stb then finds
  // the file short of its codes and refuses it with its own reason.
  std::string fair("\xff\xd8\xff\xc4\x01\x13\x00", 7);
  fair += std::string(16, '\x10');
  expect_refused(fair, "fair.jpg", 3, ErrorCode::bad_data, "not a readable image (");
}

// Found by tests/fuzz (image, ASan, after the check above): stb skips bytes that are no
// marker between segments before the frame header, so a table behind such bytes reached
// it unchecked. SOI, an APP0 of 2 bytes, 4 stray bytes, then the table of 272 codes.
TEST(ImageLimits, AJpegHuffmanTableBehindStrayBytesIsRefused) {
  std::string jpeg("\xff\xd8\xff\xe0\x00\x04\xaa\xbb\xf4\xf4\x09\x00\xff\xc4\x00\x13\x00", 17);
  jpeg += std::string(16, '\x11');
  expect_refused(jpeg, "stray.jpg", 3, ErrorCode::bad_data, "a JPEG Huffman table at byte 16 declares 272 codes");
}

// stb decodes a scan's 0xFF 0xFF 0x00 as a stuffed byte after a fill byte, and 0xFF 0xFF
// 0xD0 as a restart marker, and goes on to the segments after the scan: the check must
// walk past them too. SOI, SOS (length 8, 1 component), scan data with both, then the
// table of 272 codes.
TEST(ImageLimits, AJpegHuffmanTableAfterFillBytesInAScanIsRefused) {
  std::string jpeg("\xff\xd8\xff\xda\x00\x08\x01\x01\x00\x00\x3f\x00", 12);
  jpeg += std::string("\x12\xff\xff\x00\x34\xff\xff\xd0\x56\xff\x00\x78", 12);  // bytes 12-23
  jpeg += std::string("\xff\xc4\x00\x13\x00", 5);                               // DHT at 24
  jpeg += std::string(16, '\x11');
  expect_refused(jpeg, "fill.jpg", 3, ErrorCode::bad_data, "a JPEG Huffman table at byte 28 declares 272 codes");
}

// Found by tests/fuzz (image): stb 2.27 overflows an int reading a PNM header number of
// 10 digits or more (undefined behaviour), and a heap buffer converting 16-bit PNM
// samples; such headers are refused before stb sees them.
TEST(ImageLimits, APnmHeaderNumberTooLongForStbIsRefused) {
  const std::string pnm("P5\n8888888888 2\n255\n\x00\x40", 22);
  expect_refused(pnm, "long.pgm", 1, ErrorCode::bad_data, "PNM header number of 10 digits");
  // And a 16-bit one (maximum value above 255), whose conversion to 8 bits overflows a
  // heap buffer in stb 2.27.
  const std::string wide("P5\n2 1\n277\n\x01\x40\x80\xff", 15);
  expect_refused(wide, "wide.pgm", 1, ErrorCode::unsupported, "16-bit PNM (maximum value 277)");
  const std::string ok("P5\n# a comment 12345678901\n2 1\n255\n\x00\x40", 37);
  EXPECT_EQ(decode_image(std::as_bytes(std::span(ok.data(), ok.size())), "ok.pgm", 1).shape(), (Shape{1, 2, 1}));
}

// Found by tests/fuzz (image): stb allocated a PNG chunk's declared length before reading
// it (1.2 GB for a 2 x 2 image); a chunk longer than the rest of the file is refused first.
TEST(ImageLimits, APngChunkLongerThanTheFileIsRefused) {
  std::string png = encode_png(Array(DType::u8, Shape{2, 2, 1}));
  png[png.find("IDAT") - 4] = 0x4b;  // the high byte of the chunk's big-endian length
  expect_refused(png, "long.png", 1, ErrorCode::bad_data, "long.png: not a readable image (a PNG chunk at byte");
}

// Found by tests/fuzz (image, UBSan): an empty IDAT chunk before any image data had stb
// memcpy 0 bytes into its still null buffer; refused. An empty IDAT after data stays valid.
TEST(ImageLimits, APngWhoseFirstIdatIsEmptyIsRefused) {
  const std::string png = encode_png(Array(DType::u8, Shape{2, 2, 1}));
  const std::size_t idat = png.find("IDAT") - 4;                             // the chunk's length field
  const std::string empty_idat("\x00\x00\x00\x00IDAT\x35\xaf\x06\x1e", 12);  // with its CRC-32
  expect_refused(png.substr(0, idat) + empty_idat + png.substr(idat), "first.png", 1, ErrorCode::bad_data,
                 "the PNG's first IDAT chunk, at byte 33, is empty");
  const std::size_t end = png.find("IEND") - 4;
  const std::string after = png.substr(0, end) + empty_idat + png.substr(end);
  EXPECT_EQ(decode_image(std::as_bytes(std::span(after.data(), after.size())), "after.png", 1).shape(),
            (Shape{2, 2, 1}));
}

// A header that declares no pixels is refused from the header, before stb decodes (a PNM
// whose width stb cannot read, once a null memcpy inside stb).
TEST(ImageLimits, AnImageOfNoPixelsIsRefused) {
  const std::string pnm("P5\n\xff" "2 2\n255\n\x00\x40\x80\xff", 16);
  expect_refused(pnm, "empty.pgm", 1, ErrorCode::bad_data, "empty.pgm: its header declares 0 x 0 pixels");
  // Found by tests/fuzz (image): a BMP of width 0 and 2354974 rows, which stb walked row by
  // row, is refused from its header.
  const std::string bmp("BMN\x00\xa7\x35\x02\x00\x60\x60\x00\x00\x00\x00\x28\x00\x00\x00\x00\x00\x00\x00"
                        "\x1e\xef\x23\x00\x01\x00\x01\x00\x00\x00\x00\x00\x00\x00\x00\x29\x00\x00\x00\x00"
                        "\x00\x29\x00\x00\x00\x00\x00\x33",
                        50);
  expect_refused(bmp, "rows.bmp", 3, ErrorCode::bad_data, "its header declares 0 x 2354974 pixels");
}

TEST(ImageGrid, TilesImagesRowByRowWithGaps) {
  Array images(DType::f32, Shape{3, 2, 2});  // three 2 x 2 gray images: 0.0, 0.5, 1.0
  for (std::size_t i = 0; i < 12; ++i) images.data<float>()[i] = 0.5f * static_cast<float>(i / 4);
  const Array grid = image_grid(images, 2, 2, 1);
  ASSERT_EQ(grid.shape().dims(), (std::vector<std::int64_t>{5, 5, 1}));
  const auto at = [&](int y, int x) { return int(grid.data<std::uint8_t>()[static_cast<std::size_t>(y * 5 + x)]); };
  EXPECT_EQ(at(0, 0), 0);
  EXPECT_EQ(at(1, 4), 128);  // image 1, top right cell
  EXPECT_EQ(at(4, 1), 255);  // image 2, bottom left
  EXPECT_EQ(at(2, 2), 0);    // the gap
  EXPECT_EQ(at(4, 4), 0);    // the empty fourth cell
}

}  // namespace
}  // namespace vkp::dataflow
