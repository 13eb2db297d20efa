#include "dataflow/data_from_list.h"

#include "dataflow/permutation.h"

namespace vkp::dataflow {

DataFromList::DataFromList(std::vector<Datapoint> list, bool shuffle, std::uint64_t seed)
    : list_(std::move(list)), shuffle_(shuffle), seed_(seed) {}

void DataFromList::on_reset_state() { rng_ = Rng(seed_); }

void DataFromList::on_start_epoch() {
  position_ = 0;
  if (shuffle_) order_ = random_permutation(list_.size(), rng_);
}

std::optional<Datapoint> DataFromList::on_next() {
  if (position_ == list_.size()) return std::nullopt;
  const std::size_t i = shuffle_ ? order_[position_] : position_;
  ++position_;
  return list_[i];
}

}  // namespace vkp::dataflow
