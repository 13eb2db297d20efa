// Barriers between vkpack's commands. A command that reads a byte range written since
// the last barrier, or writes one read or written since then, needs a barrier first;
// Recording and TransferBatch place their barriers by Hazards.
#pragma once

#include <vulkan/vulkan_core.h>

#include <span>
#include <vector>

namespace vkp::vk {

// The stages and accesses of vkpack's commands: kernels and copies; on a transfer
// queue, copies only.
constexpr VkPipelineStageFlags kWorkStages = VK_PIPELINE_STAGE_COMPUTE_SHADER_BIT | VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kWrites = VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kReadsAndWrites =
    VK_ACCESS_SHADER_READ_BIT | VK_ACCESS_SHADER_WRITE_BIT | VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkPipelineStageFlags kCopyStage = VK_PIPELINE_STAGE_TRANSFER_BIT;
constexpr VkAccessFlags kCopyWrites = VK_ACCESS_TRANSFER_WRITE_BIT;
constexpr VkAccessFlags kCopyAccess = VK_ACCESS_TRANSFER_READ_BIT | VK_ACCESS_TRANSFER_WRITE_BIT;

struct ByteRange {
  VkBuffer buffer;
  VkDeviceSize begin, end;  // [begin, end) bytes of buffer
  bool overlaps(const ByteRange& o) const { return buffer == o.buffer && begin < o.end && o.begin < end; }
};

class Hazards {
 public:
  // Whether a command with these accesses must wait for a barrier.
  bool conflict(std::span<const ByteRange> reads, std::span<const ByteRange> writes) const {
    for (const ByteRange& r : reads)
      for (const ByteRange& w : written_)
        if (r.overlaps(w)) return true;
    for (const ByteRange& w : writes) {
      for (const ByteRange& o : written_)
        if (w.overlaps(o)) return true;
      for (const ByteRange& o : read_)
        if (w.overlaps(o)) return true;
    }
    return false;
  }
  void add(std::span<const ByteRange> reads, std::span<const ByteRange> writes) {
    read_.insert(read_.end(), reads.begin(), reads.end());
    written_.insert(written_.end(), writes.begin(), writes.end());
  }
  void clear() {  // a barrier was recorded
    read_.clear();
    written_.clear();
  }

 private:
  std::vector<ByteRange> read_, written_;
};

}  // namespace vkp::vk
