#include "engine/graph/program_fetches.h"

#include <algorithm>
#include <cstring>

namespace vkp::graph {

void ProgramFetches::add(const TensorType& type, const std::byte* host) {
  types_.push_back(type);
  hosts_.push_back(host);
}

void ProgramFetches::set_buckets(std::vector<std::vector<int>> buckets) { buckets_ = std::move(buckets); }

void ProgramFetches::begin_run() { std::fill(delivered_.begin(), delivered_.end(), 0); }

void ProgramFetches::copy(std::size_t i, std::vector<Array>& outputs) const {
  const TensorType& t = types_[i];
  if (outputs[i].dtype() != t.dtype || outputs[i].shape().dims() != t.dims) outputs[i] = Array(t.dtype, t.shape());
  std::memcpy(outputs[i].bytes().data(), hosts_[i], outputs[i].nbytes());
}

void ProgramFetches::copy_bucket(int s, std::vector<Array>& outputs) {
  if (delivered_.empty()) delivered_.assign(types_.size(), 0);
  outputs.resize(types_.size());
  for (int i : bucket(s)) {
    copy(static_cast<std::size_t>(i), outputs);
    delivered_[static_cast<std::size_t>(i)] = 1;
  }
}

void ProgramFetches::copy_rest(std::vector<Array>& outputs) {
  outputs.resize(types_.size());
  for (std::size_t i = 0; i < types_.size(); ++i)
    if (delivered_.empty() || !delivered_[i]) copy(i, outputs);
  begin_run();
}

}  // namespace vkp::graph
