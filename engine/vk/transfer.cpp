#include "engine/vk/transfer.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"
#include "engine/vk/recording.h"

namespace vkp::vk {
namespace {

// Copies start 16 bytes apart in the staging buffers (vkCmdCopyBuffer needs no alignment;
// 16 keeps host memcpy into them aligned for vector loads).
constexpr VkDeviceSize kStagingAlignment = 16;


}  // namespace

StagingRing::StagingRing(Device& device, VkDeviceSize bytes)
    : device_(&device),
      capacity_(bytes),
      upload_arena_(device, MemoryUse::upload, "staging ring upload", bytes),
      readback_arena_(device, MemoryUse::readback, "staging ring readback", bytes) {
  upload_ = upload_arena_.allocate(bytes, "staging ring");
  readback_ = readback_arena_.allocate(bytes, "staging ring");
  // Each batch resets the pool, and with it the one command buffer.
  CommandBufferOwner owner =
      make_command_buffer(device, device.queues().compute_family(), VK_COMMAND_POOL_CREATE_TRANSIENT_BIT);
  pool_ = std::move(owner.pool);
  commands_ = owner.buffer;
}

StagingRing::~StagingRing() = default;

TransferBatch::TransferBatch(Device& device) : device_(&device) {}

TransferBatch::~TransferBatch() {
  if (!recording_) return;
  // Dropped without run() (an exception on the way): end the command buffer so that the
  // next batch can begin it again.
  device_->fn().vkEndCommandBuffer(ring_->commands_);
}

void TransferBatch::begin_if_idle() {
  if (!lock_.owns_lock()) {
    LockedStaging staging = device_->lock_staging();
    lock_ = std::move(staging.lock);
    ring_ = &staging.ring;
  }
  if (recording_) return;
  // The previous batch has completed (run() waits), so its command buffer may be reset.
  check(device_->fn().vkResetCommandPool(device_->handle(), ring_->pool_.get(), 0), "vkResetCommandPool");
  VkCommandBufferBeginInfo begin{VK_STRUCTURE_TYPE_COMMAND_BUFFER_BEGIN_INFO};
  begin.flags = VK_COMMAND_BUFFER_USAGE_ONE_TIME_SUBMIT_BIT;
  check(device_->fn().vkBeginCommandBuffer(ring_->commands_, &begin), "vkBeginCommandBuffer");
  recording_ = true;
  // Work submitted earlier on this queue (a training step writing the variables being
  // read back) completes before these copies.
  barrier(kWrites, kReadsAndWrites);
}

void TransferBatch::barrier(VkAccessFlags src, VkAccessFlags dst) {
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = src;
  memory.dstAccessMask = dst;
  device_->fn().vkCmdPipelineBarrier(ring_->commands_, kWorkStages, kWorkStages, 0, 1, &memory, 0, nullptr, 0, nullptr);
  hazards_.clear();
}

void TransferBatch::copy(const BufferSlice& src, const BufferSlice& dst) {
  const ByteRange read{src.buffer, src.offset, src.offset + src.size};
  const ByteRange write{dst.buffer, dst.offset, dst.offset + src.size};
  if (hazards_.conflict({&read, 1}, {&write, 1}))
    barrier(VK_ACCESS_TRANSFER_WRITE_BIT, VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT);
  hazards_.add({&read, 1}, {&write, 1});
  const VkBufferCopy region{src.offset, dst.offset, src.size};
  device_->fn().vkCmdCopyBuffer(ring_->commands_, src.buffer, dst.buffer, 1, &region);
}

VkDeviceSize TransferBatch::reserve(VkDeviceSize& used, VkDeviceSize bytes) {
  VkDeviceSize at = (used + kStagingAlignment - 1) / kStagingAlignment * kStagingAlignment;
  if (at + bytes > ring_->capacity_) {
    run();
    begin_if_idle();
    at = 0;
  }
  used = at + bytes;
  return at;
}

void TransferBatch::upload(const BufferSlice& dst, std::span<const std::byte> src) {
  if (src.size() > dst.size)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("upload of {} bytes into a slice of {} bytes", src.size(), dst.size));
  if (src.empty()) return;  // an empty span's data() may be null, which memcpy may not take
  if (dst.host != nullptr) {
    std::memcpy(dst.host, src.data(), src.size());
    return;
  }
  begin_if_idle();
  // Larger than the ring: in pieces, one submission each.
  for (std::size_t done = 0; done < src.size();) {
    const std::size_t piece = std::min<std::size_t>(src.size() - done, ring_->capacity_);
    const VkDeviceSize at = reserve(uploaded_, piece);
    std::memcpy(ring_->upload_.host + at, src.data() + done, piece);
    copy(ring_->upload_.sub(at, piece), dst.sub(done, piece));
    done += piece;
  }
}

void TransferBatch::download(const BufferSlice& src, std::span<std::byte> dst) {
  if (dst.size() > src.size)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("download of {} bytes from a slice of {} bytes", dst.size(), src.size));
  if (dst.empty()) return;
  if (src.host != nullptr) {
    // Earlier staged uploads of this batch may write what is read here.
    if (recording_) run();
    std::memcpy(dst.data(), src.host, dst.size());
    return;
  }
  begin_if_idle();
  for (std::size_t done = 0; done < dst.size();) {
    const std::size_t piece = std::min<std::size_t>(dst.size() - done, ring_->capacity_);
    const VkDeviceSize at = reserve(staged_back_, piece);
    copy(src.sub(done, piece), ring_->readback_.sub(at, piece));
    deliveries_.push_back({at, dst.data() + done, piece});
    done += piece;
  }
}

void TransferBatch::run() {
  if (!recording_) return;
  const DeviceFns& fn = device_->fn();
  VkMemoryBarrier memory{VK_STRUCTURE_TYPE_MEMORY_BARRIER};
  memory.srcAccessMask = VK_ACCESS_TRANSFER_WRITE_BIT;
  memory.dstAccessMask = VK_ACCESS_HOST_READ_BIT | kReadsAndWrites;
  fn.vkCmdPipelineBarrier(ring_->commands_, VK_PIPELINE_STAGE_TRANSFER_BIT, kWorkStages | VK_PIPELINE_STAGE_HOST_BIT,
                          0, 1, &memory, 0, nullptr, 0, nullptr);
  recording_ = false;
  check(fn.vkEndCommandBuffer(ring_->commands_), "vkEndCommandBuffer");
  const std::uint64_t done = device_->queues().submit({&ring_->commands_, 1});
  ++ring_->submissions_;
  device_->queues().wait(done);
  if (!deliveries_.empty()) ring_->readback_arena_.invalidate();
  for (const Delivery& d : deliveries_) std::memcpy(d.dst, ring_->readback_.host + d.staged_at, d.bytes);
  deliveries_.clear();
  hazards_.clear();
  uploaded_ = staged_back_ = 0;
}

void upload(Device& device, const BufferSlice& dst, std::span<const std::byte> src) {
  TransferBatch batch(device);
  batch.upload(dst, src);
  batch.run();
}

void download(Device& device, const BufferSlice& src, std::span<std::byte> dst) {
  TransferBatch batch(device);
  batch.download(src, dst);
  batch.run();
}

}  // namespace vkp::vk
