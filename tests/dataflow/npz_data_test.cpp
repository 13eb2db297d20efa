// .npz datasets against NumPy (npz_numpy.py, Debian's python3-numpy): rows of arrays
// NumPy wrote, and an epoch vkpack wrote read by np.load as written.
#include "dataflow/npz_data.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <set>

#include "test_flows.h"
#include "core/error.h"

namespace vkp::dataflow {
namespace {

using namespace vkp::dataflow::test;

int numpy(const std::string& args) {
  const std::string command = std::string(VKPACK_TEST_PYTHON) + " " + VKPACK_NPZ_NUMPY + " " + args;
  const int status = std::system(command.c_str());
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

std::string temp_path(const std::string& name) {
  return (std::filesystem::temp_directory_path() / ("vkpack-npz-" + std::to_string(getpid()) + "-" + name)).string();
}

TEST(NpzData, ReadsTheRowsOfArraysNumpyWrote) {
  const std::string path = temp_path("keras.npz");
  ASSERT_EQ(numpy("write " + path), 0);
  NpzData df(path, {"x_train", "y_train"});
  ASSERT_EQ(df.size(), 5u);
  df.reset_state();
  std::int64_t i = 0;
  for (const Datapoint& dp : df.epoch()) {
    ASSERT_EQ(dp.size(), 2u);
    EXPECT_EQ(dp[0].shape().dims(), (std::vector<std::int64_t>{2, 3}));
    for (std::int64_t j = 0; j < 2; ++j)
      for (std::int64_t k = 0; k < 3; ++k)
        EXPECT_EQ(dp[0].data<float>()[static_cast<std::size_t>(j * 3 + k)], static_cast<float>(100 * i + 10 * j + k));
    EXPECT_EQ(dp[1].dtype(), DType::i64);
    EXPECT_EQ(dp[1].data<std::int64_t>()[0], 7 * i);
    ++i;
  }
  EXPECT_EQ(i, 5);
  // Shuffled: every row once an epoch, the same order for the same seed.
  const auto firsts = [&](std::uint64_t seed) {
    NpzData shuffled(path, {"y_train"}, true, seed);
    shuffled.reset_state();
    std::vector<std::int64_t> out;
    for (int e = 0; e < 2; ++e)
      for (const Datapoint& dp : shuffled.epoch()) out.push_back(dp[0].data<std::int64_t>()[0]);
    return out;
  };
  const std::vector<std::int64_t> seen = firsts(3);
  EXPECT_EQ(seen, firsts(3));
  EXPECT_EQ(std::multiset<std::int64_t>(seen.begin(), seen.end()), (std::multiset<std::int64_t>{0, 0, 7, 7, 14, 14, 21, 21, 28, 28}));
  try {
    NpzData(path, {"x_train", "z"});
    ADD_FAILURE() << "no error for a missing array";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("has no array 'z' (it has: other, x_train, y_train)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(NpzData(path, {"x_train", "other"}), Error);  // 5 rows against 3
  std::filesystem::remove(path);
}

TEST(NumpySerializer, AnEpochNumpyLoadsAndVkpackReadsBack) {
  const std::string path = temp_path("epoch.npz");
  std::vector<Datapoint> list;
  for (int i = 0; i < 9; ++i)
    list.push_back({Array::from<float>(Shape{2}, std::vector<float>{float(i), float(-i)}), scalar(i)});
  DataFromList source(std::move(list), false);
  NumpySerializer::save(source, path);
  EXPECT_EQ(numpy("check " + path), 0);
  const DataFlowPtr back = NumpySerializer::load(path, /*shuffle=*/false);
  back->reset_state();
  int i = 0;
  for (const Datapoint& dp : back->epoch()) {
    EXPECT_EQ(dp[0].data<float>()[1], static_cast<float>(-i));
    EXPECT_EQ(value_of(dp[1]), i++);
  }
  EXPECT_EQ(i, 9);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace vkp::dataflow
