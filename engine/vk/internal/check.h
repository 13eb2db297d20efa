// check(): turns a failed VkResult into vkp::Error naming the call and where it was made.
#pragma once

#include <vulkan/vulkan_core.h>

#include <string_view>

#include "core/error.h"

namespace vkp::vk {

std::string_view to_string(VkResult result);

// Throws Error for any result < 0 ("vkCreateBuffer failed: VK_ERROR_OUT_OF_DEVICE_MEMORY
// at engine/vk/memory.cpp:88"); the code is device_lost, out_of_memory, unsupported or
// vulkan as the result says. Success codes (VK_SUCCESS, VK_TIMEOUT, ...) pass through.
inline VkResult check(VkResult result, std::string_view call,
                      SourceLocation where = SourceLocation::current());

[[noreturn]] void throw_vk_error(VkResult result, std::string_view call, SourceLocation where);

inline VkResult check(VkResult result, std::string_view call, SourceLocation where) {
  if (result < 0) throw_vk_error(result, call, where);
  return result;
}

}  // namespace vkp::vk
