// Queues: a Device's compute queue and, where it has one, its transfer queue, each with a
// timeline semaphore whose values order its submissions: the host waits for a value, and
// a submission to one queue may wait for a value of the other's. Submissions to one
// VkQueue are serialised by a mutex (a stand-in transfer queue that is the compute queue
// itself shares the compute queue's).
#pragma once

#include <atomic>
#include <cstdint>
#include <mutex>
#include <optional>
#include <span>
#include <string>

#include "engine/vk/handle.h"
#include "engine/vk/loader.h"

namespace vkp::vk {

// A queue as (family, index in the family).
struct QueueSlot {
  std::uint32_t family = 0, index = 0;
};

// One queue and the timeline semaphore its submissions signal, in submission order.
struct QueueTimeline {
  VkQueue queue = VK_NULL_HANDLE;
  std::uint32_t family = 0;
  SemaphoreHandle timeline;
  std::atomic<std::uint64_t> submitted{0};  // the value the last submission signals
  std::mutex mutex;                         // held while submitting to the queue
};

class Queues {
 public:
  // The queues at `compute` and, when given, `transfer` of `device`, which outlives this;
  // `label` names the device in errors.
  Queues(const DeviceFns& fn, VkDevice device, QueueSlot compute, std::optional<QueueSlot> transfer, std::string label);
  Queues(const Queues&) = delete;
  Queues& operator=(const Queues&) = delete;

  std::uint32_t compute_family() const { return compute_.family; }
  // Submits command buffers to the compute queue, after the transfer timeline reaches
  // `after_transfer` (0: no wait); returns the timeline value that is reached when they
  // have completed.
  std::uint64_t submit(std::span<const VkCommandBuffer> buffers, std::uint64_t after_transfer = 0);
  // Submits each command buffer as a batch of its own, all in one vkQueueSubmit; batch
  // i signals the timeline at first + i, where first is returned. The host can then
  // wait for the results of one batch while the later ones run.
  std::uint64_t submit_batches(std::span<const VkCommandBuffer> buffers, std::uint64_t after_transfer = 0);
  // Blocks until the compute timeline reaches `value`. Throws Error(device_lost) naming
  // the device.
  void wait(std::uint64_t value);
  bool reached(std::uint64_t value) const;
  void wait_idle();

  // The transfer queue (DeviceOptions::transfer_queue), when there is one: a command
  // buffer of its family submitted after the compute timeline reaches `after_compute`;
  // returns the value its own timeline reaches on completion.
  bool has_transfer_queue() const { return transfer_.queue != VK_NULL_HANDLE; }
  std::uint32_t transfer_family() const { return transfer_.family; }
  // Whether transfers run on a queue of their own, beside the compute queue.
  bool transfer_queue_is_separate() const {
    return transfer_.queue != VK_NULL_HANDLE && transfer_.queue != compute_.queue;
  }
  std::uint64_t submit_transfer(VkCommandBuffer buffer, std::uint64_t after_compute);
  void wait_transfer(std::uint64_t value);
  bool transfer_reached(std::uint64_t value) const;
  std::uint64_t transfer_submissions() const { return transfer_.submitted; }

  // Fault injection, for tests of what happens when a device is lost: submission number
  // `after` from now (0: the next) and every later one fail as on a lost device, with
  // Error(device_lost), and submit nothing.
  void simulate_loss(std::uint64_t after = 0);

 private:
  void check_simulated_loss();                              // with compute_.mutex held
  void wait_on(VkSemaphore timeline, std::uint64_t value);  // Error(device_lost) naming the device
  std::uint64_t counter(VkSemaphore timeline) const;

  const DeviceFns& fn_;
  VkDevice device_;
  std::string label_;
  QueueTimeline compute_;
  // Its queue may be compute_'s (a stand-in), whose mutex it then takes.
  QueueTimeline transfer_;
  std::uint64_t submits_until_loss_ = UINT64_MAX;  // simulate_loss; UINT64_MAX: never
};

}  // namespace vkp::vk
