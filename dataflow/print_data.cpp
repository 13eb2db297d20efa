#include "dataflow/print_data.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "core/half.h"
#include "core/log.h"

namespace vkp::dataflow {
namespace {

template <class T>
std::pair<double, double> typed_range(const Array& a) {
  const auto [lo, hi] = std::minmax_element(a.data<T>().begin(), a.data<T>().end());
  return {static_cast<double>(*lo), static_cast<double>(*hi)};
}

// Smallest and largest element; the array must not be empty.
std::pair<double, double> value_range(const Array& a) {
  switch (a.dtype()) {
    case DType::f32: return typed_range<float>(a);
    case DType::i32: return typed_range<std::int32_t>(a);
    case DType::i64: return typed_range<std::int64_t>(a);
    case DType::u8: return typed_range<std::uint8_t>(a);
    case DType::f16: {
      double lo = 0, hi = 0;
      for (std::int64_t i = 0; i < a.numel(); ++i) {
        Half h;
        std::memcpy(&h.bits, a.bytes().data() + 2 * i, 2);
        const double v = to_float(h);
        lo = i == 0 ? v : std::min(lo, v);
        hi = i == 0 ? v : std::max(hi, v);
      }
      return {lo, hi};
    }
  }
  return {0, 0};
}

}  // namespace

std::string describe_datapoint(const Datapoint& dp) {
  std::string text;
  for (std::size_t i = 0; i < dp.size(); ++i) {
    text += fmt::format("{}{}: {}", i ? "\n" : "", i, describe(dp[i]));
    if (dp[i].numel() == 0) {
      text += " (empty)";
    } else {
      const auto [lo, hi] = value_range(dp[i]);
      text += fmt::format(" in [{:g}, {:g}]", lo, hi);
    }
  }
  return text;
}

PrintData::PrintData(DataFlowPtr df, std::size_t count, std::string name)
    : df_(std::move(df)), count_(count), name_(std::move(name)) {
  require(df_ != nullptr, ErrorCode::invalid_argument, "PrintData: the dataflow is null");
}

std::optional<Datapoint> PrintData::on_next() {
  std::optional<Datapoint> dp = df_->next();
  if (dp && printed_ < count_) {
    log_info("{}: datapoint {} of {} components\n{}", name_, printed_, dp->size(), describe_datapoint(*dp));
    ++printed_;
  }
  return dp;
}

}  // namespace vkp::dataflow
