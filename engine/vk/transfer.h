// Transfers between host memory and device buffers outside a program's own recording:
// variable initialization and assignment, checkpoints, tower broadcasts, tests.
//
// A slice the host can map is copied through its mapping. Any other slice (device-local
// memory of a discrete GPU, or every device in staged mode) goes through the device's
// staging ring: one persistent upload buffer, one persistent readback buffer and one
// command buffer re-recorded per batch. A batch therefore allocates nothing and costs
// one submission, or one per ring's worth of bytes when it carries more.
#pragma once

#include <cstddef>
#include <mutex>
#include <span>
#include <vector>

#include "engine/vk/handle.h"
#include "engine/vk/hazards.h"
#include "engine/vk/memory.h"

namespace vkp::vk {

class Device;

// The persistent staging buffers and command buffer of one Device (Device::lock_staging()).
// Used through TransferBatch, which holds the device's staging lock while it lives.
class StagingRing {
 public:
  // `bytes`: the capacity of each of the two buffers.
  StagingRing(Device& device, VkDeviceSize bytes);
  ~StagingRing();
  StagingRing(const StagingRing&) = delete;
  StagingRing& operator=(const StagingRing&) = delete;

  VkDeviceSize capacity() const { return capacity_; }
  // Submissions made so far (for tests of batching).
  std::uint64_t submissions() const { return submissions_; }

 private:
  friend class TransferBatch;
  Device* device_;
  VkDeviceSize capacity_;
  Arena upload_arena_, readback_arena_;
  BufferSlice upload_, readback_;
  CommandPoolHandle pool_;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;  // freed with pool_
  std::uint64_t submissions_ = 0;
};

// Copies in order, run together. Uploads read their source during the call; downloads
// fill their destination by run(), which must be called (a batch destroyed without it
// drops the copies it has not submitted yet).
class TransferBatch {
 public:
  explicit TransferBatch(Device& device);
  ~TransferBatch();
  TransferBatch(const TransferBatch&) = delete;
  TransferBatch& operator=(const TransferBatch&) = delete;

  void upload(const BufferSlice& dst, std::span<const std::byte> src);
  void download(const BufferSlice& src, std::span<std::byte> dst);
  // Submits what is recorded, waits, and delivers the downloads.
  void run();

 private:
  struct Delivery {
    VkDeviceSize staged_at;
    std::byte* dst;
    std::size_t bytes;
  };
  void begin_if_idle();
  void copy(const BufferSlice& src, const BufferSlice& dst);
  void barrier(VkAccessFlags src, VkAccessFlags dst);
  // Room for `bytes` in the upload (or readback) buffer, flushing first if needed.
  VkDeviceSize reserve(VkDeviceSize& used, VkDeviceSize bytes);

  Device* device_;
  std::unique_lock<std::mutex> lock_;  // the device's staging lock, taken at the first staged copy
  StagingRing* ring_ = nullptr;
  bool recording_ = false;
  VkDeviceSize uploaded_ = 0, staged_back_ = 0;  // bytes used in each ring buffer
  Hazards hazards_;                              // since the last barrier
  std::vector<Delivery> deliveries_;
};

// One-off copies (a batch of one), for setup and tests; per-step work is recorded into
// programs instead.
void upload(Device& device, const BufferSlice& dst, std::span<const std::byte> src);
void download(Device& device, const BufferSlice& src, std::span<std::byte> dst);

}  // namespace vkp::vk
