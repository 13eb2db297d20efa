// Descriptors: the descriptor sets of one Recording's dispatches, from pools of its own,
// and the texel-buffer views they bind, alive as long as the recording's commands are.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "engine/vk/handle.h"
#include "engine/vk/memory.h"

namespace vkp::vk {

class Device;
class Kernel;

class Descriptors {
 public:
  explicit Descriptors(Device& device) : device_(&device) {}

  // A set of `kernel`'s layout with bindings[i] at binding i: its buffer range, or a
  // texel-buffer view of it where the kernel declares a textureBuffer (Error naming the
  // kernel and `label` when the slice cannot be one).
  VkDescriptorSet write(const Kernel& kernel, std::span<const BufferSlice> bindings, std::string_view label);

 private:
  VkDescriptorSet allocate(VkDescriptorSetLayout layout);

  Device* device_;
  std::vector<DescriptorPoolHandle> pools_;
  std::vector<BufferViewHandle> views_;
  std::uint32_t sets_left_ = 0;
};

}  // namespace vkp::vk
