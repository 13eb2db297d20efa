#include "engine/graph/program_fetches.h"

#include <algorithm>

namespace vkp::graph {

void ProgramFetches::add(const TensorType& type, const std::byte* host) {
  types_.push_back(type);
  hosts_.push_back(host);
}

void ProgramFetches::set_buckets(std::vector<std::vector<int>> buckets) { buckets_ = std::move(buckets); }

void ProgramFetches::begin_run() { std::fill(delivered_.begin(), delivered_.end(), 0); }

void ProgramFetches::copy_bucket(int s, std::vector<Array>& outputs) {
  if (delivered_.empty()) delivered_.assign(types_.size(), 0);
  outputs.resize(types_.size());
  for (int b : bucket(s)) {
    const auto i = static_cast<std::size_t>(b);
    copy_value(types_[i], hosts_[i], outputs[i]);
    delivered_[i] = 1;
  }
}

void ProgramFetches::copy_rest(std::vector<Array>& outputs) {
  outputs.resize(types_.size());
  for (std::size_t i = 0; i < types_.size(); ++i)
    if (delivered_.empty() || !delivered_[i]) copy_value(types_[i], hosts_[i], outputs[i]);
  begin_run();
}

}  // namespace vkp::graph
