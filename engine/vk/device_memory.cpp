#include "engine/vk/device_memory.h"

#include <string>

#include "core/error.h"

namespace vkp::vk {

std::string_view to_string(MemoryMode mode) {
  switch (mode) {
    case MemoryMode::automatic: return "auto";
    case MemoryMode::mapped: return "mapped";
    case MemoryMode::staged: return "staged";
  }
  return "?";
}

MemoryMode parse_memory_mode(std::string_view text, std::string_view what) {
  if (text == "auto") return MemoryMode::automatic;
  if (text == "mapped") return MemoryMode::mapped;
  if (text == "staged") return MemoryMode::staged;
  throw Error(ErrorCode::invalid_argument,
              std::string(what) + " is '" + std::string(text) + "'; expected mapped, staged or auto");
}

int DeviceMemory::find_type(std::uint32_t type_bits, VkMemoryPropertyFlags required,
                            VkMemoryPropertyFlags preferred) const {
  int fallback = -1;
  for (std::uint32_t i = 0; i < properties_.memoryTypeCount; ++i) {
    if (!(type_bits & (1u << i))) continue;
    const VkMemoryPropertyFlags flags = properties_.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return static_cast<int>(i);
    if (fallback < 0) fallback = static_cast<int>(i);
  }
  return fallback;
}

void DeviceMemory::count(std::int64_t bytes) {
  const std::uint64_t now = allocated_.fetch_add(static_cast<std::uint64_t>(bytes)) + static_cast<std::uint64_t>(bytes);
  std::uint64_t peak = peak_.load();
  while (now > peak && !peak_.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace vkp::vk
