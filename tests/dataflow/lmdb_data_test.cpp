// LMDB databases: a file py-lmdb wrote in tensorpack's layout read as [key, value]
// (lmdb_python.py, the reference), LMDBSerializer's files read back by it and by vkpack,
// shuffling that replays from its seed, and the errors a user meets.
#include "dataflow/lmdb_data.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "core/error.h"
#include "dataflow/data_from_list.h"

namespace vkp::dataflow {
namespace {

int reference(const std::string& args) {
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_LMDB_PYTHON + " " + args;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string text(const Array& a) { return {reinterpret_cast<const char*>(a.bytes().data()), a.nbytes()}; }

class LMDBDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    path_ = std::filesystem::temp_directory_path() /
            ("vkpack-lmdb-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name() + ".lmdb");
    std::filesystem::remove(path_);
  }
  void TearDown() override { std::filesystem::remove(path_); }

  // Seven datapoints: f32 [3] of (i, -i/2, 2) and a u8 scalar 200 + i.
  static std::vector<Datapoint> points() {
    std::vector<Datapoint> out;
    for (int i = 0; i < 7; ++i) {
      const float f = static_cast<float>(i);
      out.push_back({Array::from(Shape{3}, std::vector<float>{f, -0.5f * f, 2.0f}),
                     Array::from(Shape{}, std::vector<std::uint8_t>{static_cast<std::uint8_t>(200 + i)})});
    }
    return out;
  }

  std::filesystem::path path_;
};

TEST_F(LMDBDataTest, ReadsKeysAndValuesPyLmdbWroteSkippingTensorpacksKeyList) {
  ASSERT_EQ(reference("write " + path_.string()), 0);
  LMDBData flow(path_, /*shuffle=*/false);
  EXPECT_EQ(flow.size(), 5u);
  flow.reset_state();
  int i = 0;
  for (const Datapoint& dp : flow.epoch()) {
    ASSERT_EQ(dp.size(), 2u);
    EXPECT_EQ(text(dp[0]), "0000000" + std::to_string(i));
    EXPECT_EQ(text(dp[1]), std::string(3 * static_cast<std::size_t>(i), static_cast<char>(i)));
    ++i;
  }
  EXPECT_EQ(i, 5);
}

TEST_F(LMDBDataTest, TheSerializerRoundTripsAndPyLmdbReadsItsFiles) {
  const std::vector<Datapoint> want = points();
  DataFromList list(want, /*shuffle=*/false);
  EXPECT_EQ(LMDBSerializer::save(list, path_, /*write_frequency=*/3), 7u);
  EXPECT_EQ(reference("check " + path_.string()), 0);
  EXPECT_FALSE(std::filesystem::exists(path_.string() + "-lock"));
  std::unique_ptr<DataFlow> back = LMDBSerializer::load(path_, /*shuffle=*/false);
  EXPECT_EQ(back->size(), 7u);
  back->reset_state();
  std::size_t i = 0;
  for (const Datapoint& dp : back->epoch()) {
    ASSERT_EQ(dp.size(), 2u);
    for (std::size_t c = 0; c < 2; ++c) {
      EXPECT_EQ(dp[c].dtype(), want[i][c].dtype());
      EXPECT_EQ(dp[c].shape(), want[i][c].shape());
      EXPECT_TRUE(std::equal(dp[c].bytes().begin(), dp[c].bytes().end(), want[i][c].bytes().begin()));
    }
    ++i;
  }
  EXPECT_EQ(i, 7u);
}

// 40 MiB of values, more than the 32 MiB map a database is first written into: in one
// transaction (LMDB finds the map full and the transaction is written again into a
// larger one) and in transactions of three (the map grows between them).
TEST_F(LMDBDataTest, ADatabaseLargerThanItsFirstMapIsWrittenWhole) {
  std::vector<Datapoint> want;
  for (int i = 0; i < 40; ++i)
    want.push_back({Array::from(Shape{1 << 20}, std::vector<std::uint8_t>(1 << 20, static_cast<std::uint8_t>(i)))});
  for (const std::size_t write_frequency : {std::size_t{5000}, std::size_t{3}}) {
    SCOPED_TRACE(write_frequency);
    DataFromList list(want, /*shuffle=*/false);
    ASSERT_EQ(LMDBSerializer::save(list, path_, write_frequency), 40u);
    std::unique_ptr<DataFlow> back = LMDBSerializer::load(path_, /*shuffle=*/false);
    back->reset_state();
    std::size_t i = 0;
    for (const Datapoint& dp : back->epoch()) {
      ASSERT_EQ(dp.size(), 1u);
      ASSERT_EQ(dp[0].nbytes(), std::size_t{1} << 20);
      EXPECT_TRUE(std::equal(dp[0].bytes().begin(), dp[0].bytes().end(), want[i][0].bytes().begin())) << i;
      ++i;
    }
    EXPECT_EQ(i, 40u);
  }
}

TEST_F(LMDBDataTest, ShufflingVisitsEveryKeyOnceAndReplaysFromItsSeed) {
  DataFromList list(points(), /*shuffle=*/false);
  LMDBSerializer::save(list, path_);
  const auto epochs = [&](std::uint64_t seed) {
    std::vector<std::string> order;
    LMDBData flow(path_, /*shuffle=*/true, seed);
    flow.reset_state();
    for (int e = 0; e < 2; ++e)
      for (const Datapoint& dp : flow.epoch()) order.push_back(text(dp[0]));
    return order;
  };
  const std::vector<std::string> a = epochs(3), b = epochs(3);
  EXPECT_EQ(a, b);
  ASSERT_EQ(a.size(), 14u);
  std::vector<std::string> first(a.begin(), a.begin() + 7), second(a.begin() + 7, a.end());
  EXPECT_NE(first, second);  // a new order each epoch (1 in 5040 to fail by chance: fixed seed)
  std::sort(first.begin(), first.end());
  std::sort(second.begin(), second.end());
  EXPECT_EQ(first, second);
  EXPECT_EQ(first.front(), "00000000");
  EXPECT_EQ(first.back(), "00000006");
}

TEST_F(LMDBDataTest, ADamagedValueIsNamedByItsKeyAndAMissingFileByItsPath) {
  ASSERT_EQ(reference("write " + path_.string()), 0);  // raw values: not datapoint bytes
  std::unique_ptr<DataFlow> foreign = LMDBSerializer::load(path_, /*shuffle=*/false);
  foreign->reset_state();
  foreign->start_epoch();
  try {
    foreign->next();
    FAIL() << "raw bytes decoded as a datapoint";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::bad_data);
    EXPECT_NE(std::string(e.what()).find("key 00000000: malformed payload"), std::string::npos) << e.what();
  }
  try {
    LMDBData missing(path_.string() + ".absent");
    FAIL() << "opened a file that is not there";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::io);
    EXPECT_NE(std::string(e.what()).find(".absent"), std::string::npos) << e.what();
  }
}

TEST_F(LMDBDataTest, AFailedSaveLeavesTheOldFile) {
  DataFromList list(points(), /*shuffle=*/false);
  LMDBSerializer::save(list, path_);
  // A flow that fails after two datapoints: the old file stays, no temporary is left.
  class Failing : public DataFromList {
   public:
    using DataFromList::DataFromList;

   protected:
    std::optional<Datapoint> on_next() override {
      if (++served_ > 2) throw Error(ErrorCode::io, "the source went away");
      return DataFromList::on_next();
    }

   private:
    int served_ = 0;
  } failing(points(), false);
  EXPECT_THROW(LMDBSerializer::save(failing, path_), Error);
  EXPECT_EQ(LMDBData(path_).size(), 7u);
  for (const auto& entry : std::filesystem::directory_iterator(path_.parent_path()))
    EXPECT_EQ(entry.path().string().find(path_.string() + ".tmp"), std::string::npos) << entry.path();
}

}  // namespace
}  // namespace vkp::dataflow
