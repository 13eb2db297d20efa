// BoundedQueue: a closable multi-producer, multi-consumer FIFO of at most `capacity`
// items, moved in and out in batches so that a lock is taken once per batch rather
// than once per item.
//
// Wake-ups are the expensive part of a queue between threads, so a waiting producer is
// woken only when at least half the queue is free again, and nobody is notified when
// nobody waits.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <vector>

#include "core/error.h"

namespace vkp::dataflow {

template <class T>
class BoundedQueue {
 public:
  explicit BoundedQueue(std::size_t capacity) : capacity_(capacity) {
    VKP_CHECK(capacity_ > 0, "a BoundedQueue needs room for at least one item");
  }

  std::size_t capacity() const { return capacity_; }

  // Moves all of `items` in and clears it, waiting for room while the queue is full. A
  // batch larger than the capacity goes in once the queue is empty. Returns false, and
  // leaves `items` alone, when the queue is closed.
  bool push_all(std::vector<T>& items) {
    if (items.empty()) return !closed();
    std::unique_lock lock(mutex_);
    const std::size_t need = std::min(items.size(), capacity_);
    ++waiting_producers_;
    not_full_.wait(lock, [&] { return closed_ || items_.size() + need <= capacity_; });
    --waiting_producers_;
    if (closed_) return false;
    for (T& item : items) items_.push_back(std::move(item));
    items.clear();
    const bool wake = waiting_consumers_ > 0;
    lock.unlock();
    if (wake) not_empty_.notify_one();
    return true;
  }

  bool push(T item) {
    std::vector<T> one;
    one.push_back(std::move(item));
    return push_all(one);
  }

  // Waits until there is an item or the queue is closed, then moves up to `max_items`
  // items to the end of `out`. Returns false when the queue is closed and empty.
  bool pop_some(std::vector<T>& out, std::size_t max_items) {
    std::unique_lock lock(mutex_);
    if (items_.empty() && !closed_) {
      ++waiting_consumers_;
      consumer_waiting_.store(true, std::memory_order_relaxed);
      not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
      consumer_waiting_.store(--waiting_consumers_ > 0, std::memory_order_relaxed);
    }
    if (items_.empty()) return false;
    const std::size_t n = std::min(max_items, items_.size());
    for (std::size_t i = 0; i < n; ++i) {
      out.push_back(std::move(items_.front()));
      items_.pop_front();
    }
    const bool wake = waiting_producers_ > 0 && items_.size() <= capacity_ / 2;
    lock.unlock();
    if (wake) not_full_.notify_all();
    return true;
  }

  // Whether a consumer is blocked on an empty queue: producers holding a partial batch
  // hand it over at once rather than waiting to fill it. A hint, read without the lock.
  bool consumer_waiting() const { return consumer_waiting_.load(std::memory_order_relaxed); }

  // Wakes every waiter; later pushes fail, pops drain what is left.
  void close() {
    {
      std::lock_guard lock(mutex_);
      closed_ = true;
    }
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  bool closed() const {
    std::lock_guard lock(mutex_);
    return closed_;
  }

 private:
  const std::size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
  int waiting_producers_ = 0;
  int waiting_consumers_ = 0;
  std::atomic<bool> consumer_waiting_{false};
};

}  // namespace vkp::dataflow
