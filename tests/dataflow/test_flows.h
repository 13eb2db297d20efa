// Small flows and helpers shared by the dataflow tests.
#pragma once

#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <string>
#include <vector>

#include "dataflow/data_from_generator.h"
#include "dataflow/data_from_list.h"

namespace vkp::dataflow::test {

inline Array scalar(std::int32_t v) {
  Array a(DType::i32, Shape{});
  a.data<std::int32_t>()[0] = v;
  return a;
}

inline std::int32_t value_of(const Array& a, std::size_t i = 0) { return a.data<std::int32_t>()[i]; }

// {scalar(first)}, {scalar(first + 1)}, ... in order.
inline DataFlowPtr range_flow(int n, int first = 0) {
  std::vector<Datapoint> list;
  for (int i = 0; i < n; ++i) list.push_back({scalar(first + i)});
  return std::make_unique<DataFromList>(std::move(list), false);
}

// The same datapoints as range_flow, from a generator whose size() is unknown.
inline DataFlowPtr unsized_range_flow(int n, int first = 0) {
  return std::make_unique<DataFromGenerator>([n, first] {
    return DataFromGenerator::Generator([n, first, i = 0]() mutable -> std::optional<Datapoint> {
      if (i == n) return std::nullopt;
      return Datapoint{scalar(first + i++)};
    });
  });
}

// Component `c` (an i32 scalar) of every datapoint of one epoch.
inline std::vector<int> epoch_values(DataFlow& df, std::size_t c = 0) {
  std::vector<int> values;
  for (const Datapoint& dp : df.epoch()) values.push_back(value_of(dp.at(c)));
  return values;
}

inline std::vector<int> iota_values(int n, int first = 0) {
  std::vector<int> v;
  for (int i = 0; i < n; ++i) v.push_back(first + i);
  return v;
}

// A fresh directory under the system's temporary directory, removed with its contents.
class TempDir {
 public:
  TempDir() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("vkpack_dataflow_test_" + std::to_string(getpid()) + "_" + std::to_string(counter++));
    std::filesystem::remove_all(path_);
    std::filesystem::create_directories(path_);
  }
  ~TempDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

// The message of the vkp::Error that `f` throws, with its code checked; fails the test
// if nothing is thrown.
template <class F>
std::string error_message(F&& f, ErrorCode code) {
  try {
    f();
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), code) << e.what();
    return e.what();
  }
  ADD_FAILURE() << "no vkp::Error thrown";
  return "";
}

}  // namespace vkp::dataflow::test
