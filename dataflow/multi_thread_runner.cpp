#include "dataflow/multi_thread_runner.h"

#include <algorithm>

#include <fmt/format.h>

namespace vkp::dataflow {

MultiThreadRunner::MultiThreadRunner(const Factory& factory, MultiThreadRunnerOptions options)
    : options_(options), queue_(std::max<std::size_t>(options.queue_size, 1)) {
  require(static_cast<bool>(factory), ErrorCode::invalid_argument, "MultiThreadRunner: the factory is empty");
  require(options_.num_threads >= 1, ErrorCode::invalid_argument,
          "MultiThreadRunner: num_threads must be at least 1, got 0");
  require(options_.queue_size >= 1, ErrorCode::invalid_argument,
          "MultiThreadRunner: queue_size must be at least 1, got 0");
  require(options_.chunk >= 1, ErrorCode::invalid_argument, "MultiThreadRunner: chunk must be at least 1, got 0");
  options_.chunk = std::min(options_.chunk, options_.queue_size);
  for (std::size_t i = 0; i < options_.num_threads; ++i) {
    copies_.push_back(factory(i));
    require(copies_.back() != nullptr, ErrorCode::invalid_argument,
            "MultiThreadRunner: the factory returned null for copy " + std::to_string(i));
  }
  size_ = copies_[0]->size();
}

std::string MultiThreadRunner::own_replay_obstacle() const {
  if (options_.num_threads == 1) return {};
  return fmt::format("{} threads interleave their copies in the order the threads run", options_.num_threads);
}

MultiThreadRunner::~MultiThreadRunner() {
  queue_.close();
  for (std::thread& t : threads_) t.join();
}

void MultiThreadRunner::on_reset_state() {
  running_ = copies_.size();
  threads_.reserve(copies_.size());
  for (DataFlowPtr& copy : copies_) threads_.emplace_back([this, &copy] { run_copy(*copy); });
}

void MultiThreadRunner::run_copy(DataFlow& copy) {
  std::vector<Item> batch;
  batch.reserve(options_.chunk);
  try {
    copy.reset_state();
    bool yielded = true;
    while (yielded) {
      yielded = false;
      for (Datapoint& dp : copy.epoch()) {
        yielded = true;
        batch.push_back(Item{std::move(dp), nullptr});
        if (batch.size() >= options_.chunk || queue_.consumer_waiting())
          if (!queue_.push_all(batch)) return;
      }
    }
    if (!queue_.push_all(batch)) return;
  } catch (...) {
    batch.push_back(Item{std::nullopt, std::current_exception()});
    if (!queue_.push_all(batch)) return;
  }
  queue_.push(Item{});
}

std::optional<Datapoint> MultiThreadRunner::on_next() {
  if (error_) std::rethrow_exception(error_);
  if (size_ && yielded_ == *size_) return std::nullopt;
  while (true) {
    while (taken_position_ < taken_.size()) {
      Item& item = taken_[taken_position_++];
      if (item.datapoint) {
        ++yielded_;
        return std::move(item.datapoint);
      }
      if (item.error) {
        error_ = item.error;
        std::rethrow_exception(error_);
      }
      --running_;
    }
    taken_.clear();
    taken_position_ = 0;
    if (running_ == 0) return std::nullopt;
    if (!queue_.pop_some(taken_, options_.queue_size)) return std::nullopt;
  }
}

}  // namespace vkp::dataflow
