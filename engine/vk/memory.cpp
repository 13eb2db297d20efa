#include "engine/vk/memory.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {
namespace {

std::string mib(VkDeviceSize bytes) { return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20)); }

std::string_view use_name(MemoryUse use) {
  switch (use) {
    case MemoryUse::device: return "device";
    case MemoryUse::upload: return "upload";
    case MemoryUse::readback: return "readback";
  }
  return "?";
}

}  // namespace

BufferSlice BufferSlice::sub(VkDeviceSize at, VkDeviceSize bytes) const {
  if (at + bytes > size)
    throw Error(ErrorCode::invalid_argument, fmt::format("sub-slice [{}, {}) is outside a slice of {} bytes",
                                                         at, at + bytes, size));
  return {buffer, offset + at, bytes, host ? host + at : nullptr, f16};
}

Arena::Arena(Device& device, MemoryUse use, std::string name, VkDeviceSize block_bytes)
    : device_(&device), use_(use), name_(std::move(name)) {
  const DeviceLimits& limits = device.limits();
  alignment_ = std::max<VkDeviceSize>(kAlignment, limits.min_storage_buffer_offset_alignment);
  switch (use) {
    case MemoryUse::device:
      required_ = VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT;
      if (device.memory().mapped())
        required_ |= VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUse::upload:
      required_ = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
      break;
    case MemoryUse::readback:
      // Cached memory reads fast on the host; where it is not coherent (ARM, Qualcomm)
      // invalidate() makes the device's writes visible.
      required_ = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT;
      preferred_ = VK_MEMORY_PROPERTY_HOST_CACHED_BIT;
      coherent_ = device.features().coherent_readback;
      break;
  }
  host_visible_ = (required_ & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT) != 0;
  std::uint64_t heap = 0;
  for (const MemoryHeapInfo& h : device.info().heaps) heap = std::max(heap, h.bytes);
  block_bytes_ = block_bytes != 0 ? block_bytes
                                  : std::min<VkDeviceSize>({VkDeviceSize{32} << 20, limits.max_memory_allocation_size,
                                                            std::max<VkDeviceSize>(heap / 16, 1 << 20)});
}

Arena::~Arena() {
  for (const Block& b : blocks_) device_->memory().count(-static_cast<std::int64_t>(b.size));
}

VkDeviceSize Arena::reserved_bytes() const {
  VkDeviceSize total = 0;
  for (const Block& b : blocks_) total += b.size;
  return total;
}

BufferSlice Arena::allocate(VkDeviceSize bytes, std::string_view what) {
  const VkDeviceSize size = std::max<VkDeviceSize>(bytes, 4);
  Block* block = blocks_.empty() ? nullptr : &blocks_.back();
  VkDeviceSize at = block ? (block->used + alignment_ - 1) / alignment_ * alignment_ : 0;
  if (block == nullptr || at + size > block->size) {
    add_block(std::max(block_bytes_, (size + alignment_ - 1) / alignment_ * alignment_), what);
    block = &blocks_.back();
    at = 0;
  }
  block->used = at + size;
  allocated_ += size;
  return {block->buffer.get(), at, size, block->mapped ? block->mapped + at : nullptr};
}

void Arena::invalidate() const {
  if (coherent_ || !host_visible_ || blocks_.empty()) return;
  // Whole blocks: offset 0 and VK_WHOLE_SIZE satisfy any nonCoherentAtomSize. One
  // call per block, so that a step's readback allocates nothing.
  for (const Block& b : blocks_) {
    VkMappedMemoryRange r{VK_STRUCTURE_TYPE_MAPPED_MEMORY_RANGE};
    r.memory = b.memory.get();
    r.offset = 0;
    r.size = VK_WHOLE_SIZE;
    check(device_->fn().vkInvalidateMappedMemoryRanges(device_->handle(), 1, &r), "vkInvalidateMappedMemoryRanges");
  }
}

void Arena::add_block(VkDeviceSize bytes, std::string_view what) {
  const DeviceFns& fn = device_->fn();
  const VkDevice dev = device_->handle();
  const std::string request = fmt::format("arena '{}' ({} memory) needs a block of {} for '{}' on {}", name_,
                                          use_name(use_), mib(bytes), what, device_->label());
  if (bytes > device_->limits().max_memory_allocation_size)
    throw Error(ErrorCode::out_of_memory, request + ", more than one allocation may hold (" +
                                              mib(device_->limits().max_memory_allocation_size) + ")");
  VkBufferCreateInfo buffer_info{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  buffer_info.size = bytes;
  buffer_info.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_UNIFORM_TEXEL_BUFFER_BIT |
                      VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  buffer_info.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  // A transfer queue of another family (a discrete GPU's DMA engine) writes inputs that
  // the compute queue reads: shared by both families, no ownership transfers.
  const std::uint32_t families[2] = {device_->queues().compute_family(), device_->queues().transfer_family()};
  if (device_->queues().has_transfer_queue() && families[0] != families[1]) {
    buffer_info.sharingMode = VK_SHARING_MODE_CONCURRENT;
    buffer_info.queueFamilyIndexCount = 2;
    buffer_info.pQueueFamilyIndices = families;
  }
  VkBuffer buffer = VK_NULL_HANDLE;
  check(fn.vkCreateBuffer(dev, &buffer_info, nullptr, &buffer), "vkCreateBuffer");
  BufferHandle buffer_owner(dev, buffer, fn.vkDestroyBuffer);

  VkMemoryRequirements needs{};
  fn.vkGetBufferMemoryRequirements(dev, buffer, &needs);
  const int type = device_->memory().find_type(needs.memoryTypeBits, required_, preferred_);
  if (type < 0) throw Error(ErrorCode::unsupported, request + ", but the device has no suitable memory type");
  VkMemoryAllocateInfo alloc{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  alloc.allocationSize = needs.size;
  alloc.memoryTypeIndex = static_cast<std::uint32_t>(type);
  VkDeviceMemory memory = VK_NULL_HANDLE;
  const VkResult result = fn.vkAllocateMemory(dev, &alloc, nullptr, &memory);
  if (result == VK_ERROR_OUT_OF_DEVICE_MEMORY || result == VK_ERROR_OUT_OF_HOST_MEMORY) {
    const auto heap = device_->memory().properties().memoryTypes[type].heapIndex;
    throw Error(ErrorCode::out_of_memory,
                fmt::format("out of {} memory: {}; heap {} holds {}, of which vkpack has {} allocated on this device",
                            result == VK_ERROR_OUT_OF_DEVICE_MEMORY ? "device" : "host", request, heap,
                            mib(device_->memory().properties().memoryHeaps[heap].size),
                            mib(device_->memory().allocated_bytes())));
  }
  check(result, "vkAllocateMemory");
  MemoryHandle memory_owner(dev, memory, fn.vkFreeMemory);
  if (!(device_->memory().properties().memoryTypes[type].propertyFlags & VK_MEMORY_PROPERTY_HOST_COHERENT_BIT))
    coherent_ = false;
  check(fn.vkBindBufferMemory(dev, buffer, memory, 0), "vkBindBufferMemory");
  void* mapped = nullptr;
  if (host_visible_) check(fn.vkMapMemory(dev, memory, 0, VK_WHOLE_SIZE, 0, &mapped), "vkMapMemory");
  blocks_.push_back({std::move(memory_owner), std::move(buffer_owner), static_cast<std::byte*>(mapped), bytes, 0});
  device_->memory().count(static_cast<std::int64_t>(bytes));
}

}  // namespace vkp::vk
