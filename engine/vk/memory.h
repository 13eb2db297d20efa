// Device memory: arenas of a few large allocations carved by offset.
//
// Training allocates once: a program's tensors get offsets from a static plan, and the
// arena hands out byte ranges of a few big VkDeviceMemory blocks, each bound to one
// VkBuffer that spans it. Kernels bind (buffer, offset, size) ranges of those buffers.
// There is no per-tensor allocation and no free: an arena's memory returns to the
// device when the arena is destroyed.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "engine/vk/handle.h"

namespace vkp::vk {

class Device;

// A byte range of a buffer.
struct BufferSlice {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;   // bytes from the start of buffer
  VkDeviceSize size = 0;     // bytes
  std::byte* host = nullptr; // the mapped address of `offset`, or null when not mappable
  // The elements are float16 (IEEE binary16) rather than float32: a tensor kept in half
  // precision (CompileOptions::f16_storage). Kernels that accept it convert on load and
  // store and compute in float32; the others reject it.
  bool f16 = false;

  // A sub-range; offset and size in bytes, relative to this slice.
  BufferSlice sub(VkDeviceSize offset, VkDeviceSize size) const;
  // The mapped bytes as T; only for host-visible slices.
  template <class T>
  std::span<T> host_span() const {
    return {reinterpret_cast<T*>(host), static_cast<std::size_t>(size / sizeof(T))};
  }
};

enum class MemoryUse {
  device,    // kernels read and write it; mapped too where the device allows (UMA)
  upload,    // host writes, device reads (staging for feeds)
  readback,  // device writes, host reads (staging for fetches)
};

class Arena {
 public:
  // Every allocation is aligned to this many bytes (at least; more if the device asks).
  static constexpr VkDeviceSize kAlignment = 256;

  // `name` appears in error messages ("arena 'program train' ..."). block_bytes = 0
  // picks min(32 MiB, maxMemoryAllocationSize, 1/16 of the heap); a larger request
  // gets a block of its own size.
  Arena(Device& device, MemoryUse use, std::string name, VkDeviceSize block_bytes = 0);
  ~Arena();
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  // `bytes` from the current block, or from a new one. Throws Error(out_of_memory)
  // naming `what`, the arena, the size and the heap when the device refuses.
  BufferSlice allocate(VkDeviceSize bytes, std::string_view what);

  bool host_visible() const { return host_visible_; }
  // Makes what the device wrote visible to the host through the mapping, where the
  // memory is not host-coherent (a real device's cached readback type, or any readback
  // arena under a limits profile that says so); a no-op elsewhere. Call after the wait
  // and before reading.
  void invalidate() const;
  bool coherent() const { return coherent_; }
  VkDeviceSize allocated_bytes() const { return allocated_; }  // sum of allocate() sizes
  VkDeviceSize reserved_bytes() const;                           // sum of block sizes
  std::size_t block_count() const { return blocks_.size(); }

 private:
  struct Block {
    MemoryHandle memory;
    BufferHandle buffer;   // declared after memory, so destroyed before it (best practices)
    std::byte* mapped = nullptr;
    VkDeviceSize size = 0;
    VkDeviceSize used = 0;
  };
  void add_block(VkDeviceSize bytes, std::string_view what);

  Device* device_;
  MemoryUse use_;
  std::string name_;
  VkDeviceSize block_bytes_;
  VkDeviceSize alignment_;
  VkMemoryPropertyFlags required_ = 0, preferred_ = 0;
  bool host_visible_ = false;
  bool coherent_ = true;
  VkDeviceSize allocated_ = 0;
  std::vector<Block> blocks_;
};

}  // namespace vkp::vk
