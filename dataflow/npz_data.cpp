#include "dataflow/npz_data.h"

#include <fmt/format.h>

#include <cstring>

#include "core/error.h"
#include "core/npz.h"
#include "dataflow/batch_data.h"
#include "dataflow/permutation.h"

namespace vkp::dataflow {

NpzData::NpzData(const std::string& path, std::vector<std::string> keys, bool shuffle, std::uint64_t seed)
    : NpzData(read_npz(path), std::move(keys), shuffle, seed, path) {}

NpzData::NpzData(std::map<std::string, Array> arrays, std::vector<std::string> keys, bool shuffle, std::uint64_t seed,
                 const std::string& what)
    : shuffle_(shuffle), seed_(seed) {
  require(!keys.empty(), ErrorCode::invalid_argument, "NpzData: name at least one array of " + what);
  for (const std::string& key : keys) {
    const auto it = arrays.find(key);
    if (it == arrays.end()) {
      std::string names;
      for (const auto& [name, array] : arrays) names += (names.empty() ? "" : ", ") + name;
      throw Error(ErrorCode::not_found, fmt::format("NpzData: {} has no array '{}' (it has: {})", what, key, names));
    }
    const Array& a = it->second;
    require(a.shape().rank() >= 1, ErrorCode::bad_data,
            fmt::format("NpzData: {}'s array '{}' is a scalar; its rows are the datapoints", what, key));
    const auto rows = static_cast<std::size_t>(a.shape()[0]);
    require(columns_.empty() || rows == rows_, ErrorCode::bad_data,
            fmt::format("NpzData: {}'s arrays differ in rows: '{}' has {}, '{}' {}", what, keys[0], rows_, key, rows));
    rows_ = rows;
    columns_.push_back(std::move(it->second));
  }
}

void NpzData::on_start_epoch() {
  position_ = 0;
  if (shuffle_) order_ = random_permutation(rows_, rng_);
}

std::optional<Datapoint> NpzData::on_next() {
  if (position_ == rows_) return std::nullopt;
  const std::size_t row = shuffle_ ? order_[position_] : position_;
  ++position_;
  Datapoint dp;
  for (const Array& column : columns_) {
    const std::vector<std::int64_t>& dims = column.shape().dims();
    Array out = Array::uninitialized(column.dtype(), Shape(std::vector<std::int64_t>(dims.begin() + 1, dims.end())));
    std::memcpy(out.bytes().data(), column.bytes().data() + row * out.nbytes(), out.nbytes());
    dp.push_back(std::move(out));
  }
  return dp;
}

void NumpySerializer::save(DataFlow& df, const std::string& path, std::vector<std::string> keys) {
  df.reset_state();
  std::vector<Datapoint> points;
  for (Datapoint& dp : df.epoch()) points.push_back(std::move(dp));
  require(!points.empty(), ErrorCode::invalid_argument, "NumpySerializer: the dataflow gave no datapoint for " + path);
  Datapoint stacked = stack_datapoints(points, "NumpySerializer");
  if (keys.empty())
    for (std::size_t c = 0; c < stacked.size(); ++c) keys.push_back("arr_" + std::to_string(c));
  require(keys.size() == stacked.size(), ErrorCode::invalid_argument,
          fmt::format("NumpySerializer: {} names for datapoints of {} components", keys.size(), stacked.size()));
  std::map<std::string, Array> arrays;
  for (std::size_t c = 0; c < keys.size(); ++c)
    require(arrays.emplace(keys[c], std::move(stacked[c])).second, ErrorCode::invalid_argument,
            "NumpySerializer: the name '" + keys[c] + "' is given twice");
  write_npz(path, arrays);
}

DataFlowPtr NumpySerializer::load(const std::string& path, bool shuffle, std::uint64_t seed, std::vector<std::string> keys) {
  std::map<std::string, Array> arrays = read_npz(path);
  if (keys.empty())
    for (std::size_t c = 0; arrays.count("arr_" + std::to_string(c)) > 0; ++c) keys.push_back("arr_" + std::to_string(c));
  require(!keys.empty(), ErrorCode::not_found,
          "NumpySerializer: " + path + " has no arr_0 (name the arrays to read, as NpzData does)");
  return std::make_unique<NpzData>(std::move(arrays), std::move(keys), shuffle, seed, path);
}

}  // namespace vkp::dataflow
