// Descriptors: the descriptor sets of one Recording's dispatches, from pools of its own,
// and the texel-buffer views they bind, alive as long as the recording's commands are;
// and which slices can be such views (texel_readable).
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

// Whether `slice` can be bound where a kernel declares a textureBuffer (its _texel build,
// shaders/texel_input.glsl): the device lets kernels use texel buffers
// (DeviceOptions::texel_buffers; DeviceFeatures::half_texels for a float16 slice), and the slice
// is a whole number of vec4 texels (16 bytes, 8 for float16), at most
// maxTexelBufferElements of them, from an offset that is a multiple of
// minTexelBufferOffsetAlignment. The kernel reads float32 values either way.
bool texel_readable(const BufferSlice& slice, const Device& device);
// The same for a slice of `elements` values (float16 or float32) placed as the arena
// places them (Arena::kAlignment, the largest minTexelBufferOffsetAlignment allowed).
bool texel_readable(std::uint64_t elements, bool f16, const Device& device);

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
