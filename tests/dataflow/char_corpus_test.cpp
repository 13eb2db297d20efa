// CharCorpus and CharSequenceData on a directory the test writes (documents, strfile
// indexes, aliases, a binary file) and on Debian's fortunes, whose totals are counted
// here independently of the reader.
#include "dataflow/char_corpus.h"

#include <gtest/gtest.h>

#include <fstream>
#include <set>

#include "core/error.h"

namespace vkp::dataflow {
namespace {

namespace fs = std::filesystem;

class CharCorpusTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("vkpack_char_corpus_" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  void write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name, std::ios::binary) << text;
  }

  fs::path dir_;
};

std::string text_of(const CharCorpus& c, const std::vector<std::int32_t>& ids) { return c.decode(ids); }

TEST_F(CharCorpusTest, DocumentsGoWholeToOneSideAndOnlyTextFilesAreRead) {
  write("a", "one\n%\ntwo two\n%\nthree\n%\n");
  write("b", "four\n%\nfive\nstill five\n");  // the last document has no separator
  write("a.dat", "index bytes that must not be read");
  write("binary", std::string("zz\0zz", 5));
  fs::create_symlink(dir_ / "a", dir_ / "a.u8");
  const auto corpus = read_char_corpus(dir_, {.validation_every = 2});
  EXPECT_EQ(corpus->files, 2u);
  EXPECT_EQ(corpus->train_documents, 3u);
  EXPECT_EQ(corpus->validation_documents, 2u);
  EXPECT_EQ(text_of(*corpus, corpus->train), "one\n%\nthree\n%\nfive\nstill five\n");
  EXPECT_EQ(text_of(*corpus, corpus->validation), "two two\n%\nfour\n%\n");
  const std::string all = "one%twothreefourfivestill\n ";
  const std::set<char> want(all.begin(), all.end());
  EXPECT_EQ(std::set<char>(corpus->vocabulary.begin(), corpus->vocabulary.end()), want);
  EXPECT_TRUE(std::is_sorted(corpus->vocabulary.begin(), corpus->vocabulary.end()));
  EXPECT_EQ(corpus->decode(corpus->encode("five two")), "five two");
  EXPECT_THROW(corpus->encode("x"), Error);
  // Without a separator each file is one document.
  const auto whole = read_char_corpus(dir_, {.separator = "", .validation_every = 2});
  EXPECT_EQ(text_of(*whole, whole->validation), "four\n%\nfive\nstill five\n");
}

TEST_F(CharCorpusTest, SequencesAreConsecutiveWindowsWithNextCharacterTargets) {
  std::string text;
  for (int i = 0; i < 40; ++i) text += std::string(1, static_cast<char>('a' + i % 26)) + "\n%\n";
  write("f", text);
  const auto corpus = read_char_corpus(dir_, {.validation_every = 4});
  const std::vector<std::int32_t>& ids = corpus->train;
  CharSequenceData ordered(corpus, ids, {.length = 7, .shuffle = false});
  ASSERT_EQ(ordered.size(), (ids.size() - 1) / 7);
  ordered.reset_state();
  std::size_t k = 0;
  for (const Datapoint& dp : ordered.epoch()) {
    ASSERT_EQ(dp[0].shape().dims(), std::vector<std::int64_t>{7});
    for (std::size_t t = 0; t < 7; ++t) {
      EXPECT_EQ(dp[0].data<std::int32_t>()[t], ids[k * 7 + t]);
      EXPECT_EQ(dp[1].data<std::int32_t>()[t], ids[k * 7 + t + 1]);
    }
    ++k;
  }
  EXPECT_EQ(k, ordered.size());
  // Shuffled: every window once per epoch, in an order the seed decides.
  auto key = [](const Datapoint& dp) {
    std::uint64_t packed = 0;  // wraps past 2^64: a hash of the window, not its value
    for (std::size_t t = 0; t < 7; ++t) packed = packed * 1000 + static_cast<std::uint32_t>(dp[0].data<std::int32_t>()[t]);
    return packed;
  };
  auto keys = [&](std::uint64_t seed, int epochs) {
    CharSequenceData df(corpus, ids, {.length = 7, .seed = seed});
    df.reset_state();
    std::vector<std::uint64_t> out;
    for (int epoch = 0; epoch < epochs; ++epoch)
      for (const Datapoint& dp : df.epoch()) out.push_back(key(dp));
    return out;
  };
  EXPECT_EQ(keys(3, 2), keys(3, 2));
  EXPECT_NE(keys(3, 2), keys(4, 2));
  std::vector<std::uint64_t> shuffled = keys(3, 1), in_order;
  for (const Datapoint& dp : ordered.epoch()) in_order.push_back(key(dp));
  EXPECT_NE(shuffled, in_order);
  std::sort(shuffled.begin(), shuffled.end());
  std::sort(in_order.begin(), in_order.end());
  EXPECT_EQ(shuffled, in_order);
}

TEST_F(CharCorpusTest, MissingEmptyAndTooSmallDirectoriesAreClearErrors) {
  try {
    read_char_corpus(dir_ / "missing");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find("missing"), std::string::npos) << e.what();
  }
  EXPECT_THROW(read_char_corpus(dir_), Error);  // no files
  write("one", "only\n%\n");
  try {
    read_char_corpus(dir_);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
  }
  EXPECT_THROW(read_char_corpus(dir_, {.validation_every = 1}), Error);
}

// Debian's fortunes, installed by scripts/setup: every byte of every text file lands in
// exactly one part, and 1 in 20 of the fortunes (documents ending at a "%" line) in validation.
TEST(CharCorpusFortunes, EveryByteOnceAndOneFortuneInTwentyHeldOut) {
  std::size_t bytes = 0, separators = 0;
  for (const fs::directory_entry& e : fs::directory_iterator(kFortunesDirectory)) {
    if (e.is_symlink() || e.path().extension() == ".dat") continue;
    std::ifstream in(e.path());
    std::string line;
    while (std::getline(in, line)) {
      bytes += line.size() + (in.eof() ? 0 : 1);
      separators += line == "%";
    }
  }
  const auto corpus = read_char_corpus(kFortunesDirectory);
  EXPECT_GT(bytes, 2'000'000u);
  EXPECT_EQ(corpus->train.size() + corpus->validation.size(), bytes);
  const std::size_t documents = corpus->train_documents + corpus->validation_documents;
  EXPECT_GE(documents, separators);
  EXPECT_LE(documents, separators + corpus->files);  // a file may end without a separator
  EXPECT_EQ(corpus->validation_documents, documents / 20);
  EXPECT_GT(corpus->vocab_size(), 90);
  EXPECT_LE(corpus->vocab_size(), 256);
}

TEST(CharCorpusFortunes, AMissingFortunesDirectorySaysWhichPackage) {
  try {
    read_char_corpus(kFortunesDirectory / "not-there");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not-there"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("apt-get install fortunes"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::dataflow
