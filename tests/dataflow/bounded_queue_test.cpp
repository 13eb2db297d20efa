#include "dataflow/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <numeric>
#include <thread>

namespace vkp::dataflow {
namespace {

TEST(BoundedQueue, PassesItemsInOrderInBatches) {
  BoundedQueue<int> q(10);
  std::vector<int> in{1, 2, 3, 4};
  ASSERT_TRUE(q.push_all(in));
  EXPECT_TRUE(in.empty());
  ASSERT_TRUE(q.push(5));
  std::vector<int> out;
  ASSERT_TRUE(q.pop_some(out, 3));
  ASSERT_TRUE(q.pop_some(out, 100));
  EXPECT_EQ(out, (std::vector<int>{1, 2, 3, 4, 5}));
}

TEST(BoundedQueue, AFullQueueHoldsProducersBack) {
  BoundedQueue<int> q(4);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 100; ++i) {
      if (!q.push(i)) return;
      ++pushed;
    }
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  EXPECT_EQ(pushed.load(), 4);
  std::vector<int> out;
  while (out.size() < 100) ASSERT_TRUE(q.pop_some(out, 3));
  producer.join();
  std::vector<int> want(100);
  std::iota(want.begin(), want.end(), 0);
  EXPECT_EQ(out, want);
}

TEST(BoundedQueue, CloseWakesBlockedProducersAndConsumers) {
  BoundedQueue<int> full(1), empty(1);
  ASSERT_TRUE(full.push(0));
  bool pushed = true, popped = true;
  std::thread producer([&] { pushed = full.push(1); });
  std::thread consumer([&] {
    std::vector<int> out;
    popped = empty.pop_some(out, 1);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  full.close();
  empty.close();
  producer.join();
  consumer.join();
  EXPECT_FALSE(pushed);
  EXPECT_FALSE(popped);
  std::vector<int> rest;
  EXPECT_TRUE(full.pop_some(rest, 5));  // what was queued before closing still comes out
  EXPECT_EQ(rest, (std::vector<int>{0}));
  EXPECT_FALSE(full.pop_some(rest, 5));
}

TEST(BoundedQueue, ABatchLargerThanTheCapacityGoesInWhenEmpty) {
  BoundedQueue<int> q(2);
  std::vector<int> big{1, 2, 3, 4, 5};
  ASSERT_TRUE(q.push_all(big));
  std::vector<int> out;
  ASSERT_TRUE(q.pop_some(out, 10));
  EXPECT_EQ(out.size(), 5u);
}

}  // namespace
}  // namespace vkp::dataflow
