// DeviceMemory: a device's memory as the arenas see it: its memory types, how the host
// reaches device-local memory (mapped or through staging copies), and the bytes the
// arenas hold now and at most.
#pragma once

#include <vulkan/vulkan_core.h>

#include <atomic>
#include <cstdint>
#include <string_view>

namespace vkp::vk {

// How the host reaches device-local memory.
enum class MemoryMode {
  automatic,  // VKPACK_MEMORY if set, otherwise mapped where the device allows it
  mapped,     // map device-local memory directly (UMA, resizable BAR, lavapipe); an Error where it cannot
  staged,     // as on a discrete GPU: device-local memory is never mapped, every host
              // access goes through staging buffers and copy commands
};
std::string_view to_string(MemoryMode mode);
// "mapped", "staged" or "auto"; Error(invalid_argument) naming `what` otherwise.
MemoryMode parse_memory_mode(std::string_view text, std::string_view what);

class DeviceMemory {
 public:
  DeviceMemory() = default;
  // `mapped`: device-local memory is mapped by arenas (MemoryMode::mapped).
  DeviceMemory(const VkPhysicalDeviceMemoryProperties& properties, bool mapped)
      : properties_(properties), mapped_(mapped) {}

  // The index of the memory type for `required` flags (and `preferred` ones where
  // possible) among `type_bits`, or -1.
  int find_type(std::uint32_t type_bits, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred = 0) const;
  const VkPhysicalDeviceMemoryProperties& properties() const { return properties_; }
  // Device-local memory is mapped by arenas (chosen where it can be mapped with full
  // capacity) rather than reached through staging copies.
  bool mapped() const { return mapped_; }
  MemoryMode mode() const { return mapped_ ? MemoryMode::mapped : MemoryMode::staged; }

  // Arenas count what they allocate (negative: free); thread-safe.
  void count(std::int64_t bytes);
  std::uint64_t allocated_bytes() const { return allocated_.load(); }
  std::uint64_t peak_bytes() const { return peak_.load(); }

 private:
  VkPhysicalDeviceMemoryProperties properties_{};
  bool mapped_ = false;
  std::atomic<std::uint64_t> allocated_{0};
  std::atomic<std::uint64_t> peak_{0};
};

}  // namespace vkp::vk
