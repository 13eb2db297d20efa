#include "engine/vk/descriptors.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/internal/check.h"
#include "engine/vk/kernel.h"

namespace vkp::vk {
namespace {

constexpr std::uint32_t kSetsPerPool = 128;
constexpr std::uint32_t kDescriptorsPerPool = 1024;

// The most texels a kernel reads through one view: the driver's limit, and at most 2^29,
// since the kernels index a view's elements (4 a texel) with GLSL's 32-bit int.
std::uint64_t max_texels(const DeviceLimits& l) {
  return std::min<std::uint64_t>(l.max_texel_buffer_elements, std::uint64_t{1} << 29);
}

// The rule both texel_readable()s apply: `elements` float16 or float32 values, from a
// byte offset that is a multiple of `alignment`, as one view of whole vec4 texels.
bool texel_view_fits(std::uint64_t elements, bool f16, std::uint64_t alignment, const Device& device) {
  const DeviceLimits& l = device.limits();
  return (f16 ? device.features().half_texels : device.features().texel_buffers) && elements > 0 && elements % 4 == 0 &&
         elements / 4 <= max_texels(l) && l.min_texel_buffer_offset_alignment > 0 &&
         alignment % l.min_texel_buffer_offset_alignment == 0;
}

// The view of texel binding `i`, in the format its fetches return (float16 values as
// R16G16B16A16), after checking that the slice can be one.
VkBufferViewCreateInfo texel_view(const Kernel& kernel, std::size_t i, const BufferSlice& b, std::string_view label,
                                  const Device& device) {
  const DeviceLimits& limits = device.limits();
  if (!texel_readable(b, device))
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} ({}): binding {} ({} bytes at byte {}{}) cannot be read as a texel buffer "
                            "(whole vec4s, offset a multiple of {}, at most {} texels)",
                            kernel.name(), label, i, b.size, b.offset, b.f16 ? ", float16" : "",
                            limits.min_texel_buffer_offset_alignment, max_texels(limits)));
  const TexelSampled sampled = kernel.bindings()[i].sampled;
  if (b.f16 && sampled != TexelSampled::float32)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("kernel {} ({}): binding {} holds float16 values, but the kernel reads 32-bit words there",
                            kernel.name(), label, i));
  VkBufferViewCreateInfo view{VK_STRUCTURE_TYPE_BUFFER_VIEW_CREATE_INFO};
  view.buffer = b.buffer;
  view.format = sampled == TexelSampled::uint32  ? VK_FORMAT_R32G32B32A32_UINT
                : sampled == TexelSampled::int32 ? VK_FORMAT_R32G32B32A32_SINT
                : b.f16                          ? VK_FORMAT_R16G16B16A16_SFLOAT
                                                 : VK_FORMAT_R32G32B32A32_SFLOAT;
  view.offset = b.offset;
  view.range = b.size;
  return view;
}

// One write a binding: its texel view where it has one, else its buffer range.
std::vector<VkWriteDescriptorSet> descriptor_writes(VkDescriptorSet set, const std::vector<VkBufferView>& views,
                                                    const std::vector<VkDescriptorBufferInfo>& infos) {
  std::vector<VkWriteDescriptorSet> writes;
  for (std::size_t i = 0; i < infos.size(); ++i) {
    VkWriteDescriptorSet w{VK_STRUCTURE_TYPE_WRITE_DESCRIPTOR_SET};
    w.dstSet = set;
    w.dstBinding = static_cast<std::uint32_t>(i);
    w.descriptorCount = 1;
    if (views[i] != VK_NULL_HANDLE) {
      w.descriptorType = VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER;
      w.pTexelBufferView = &views[i];
    } else {
      w.descriptorType = VK_DESCRIPTOR_TYPE_STORAGE_BUFFER;
      w.pBufferInfo = &infos[i];
    }
    writes.push_back(w);
  }
  return writes;
}

}  // namespace

bool texel_readable(const BufferSlice& slice, const Device& device) {
  const std::uint64_t bytes = slice.f16 ? 2 : 4;
  return slice.buffer != VK_NULL_HANDLE && slice.size % bytes == 0 &&
         texel_view_fits(slice.size / bytes, slice.f16, slice.offset, device);
}

bool texel_readable(std::uint64_t elements, bool f16, const Device& device) {
  return texel_view_fits(elements, f16, Arena::kAlignment, device);
}

VkDescriptorSet Descriptors::write(const Kernel& kernel, std::span<const BufferSlice> bindings,
                                   std::string_view label) {
  const DeviceFns& fn = device_->fn();
  std::vector<VkDescriptorBufferInfo> infos;
  std::vector<VkBufferView> views(bindings.size(), VK_NULL_HANDLE);
  for (std::size_t i = 0; i < bindings.size(); ++i) {
    const BufferSlice& b = bindings[i];
    infos.push_back({b.buffer, b.offset, b.size});
    if (!kernel.bindings()[i].texel) continue;
    const VkBufferViewCreateInfo view = texel_view(kernel, i, b, label, *device_);
    check(fn.vkCreateBufferView(device_->handle(), &view, nullptr, &views[i]), "vkCreateBufferView");
    views_.emplace_back(device_->handle(), views[i], fn.vkDestroyBufferView);
  }
  const VkDescriptorSet set = allocate(kernel.set_layout());
  const std::vector<VkWriteDescriptorSet> writes = descriptor_writes(set, views, infos);
  fn.vkUpdateDescriptorSets(device_->handle(), static_cast<std::uint32_t>(writes.size()), writes.data(), 0, nullptr);
  return set;
}

VkDescriptorSet Descriptors::allocate(VkDescriptorSetLayout layout) {
  const DeviceFns& fn = device_->fn();
  if (sets_left_ == 0) {
    const VkDescriptorPoolSize sizes[] = {{VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, kDescriptorsPerPool},
                                          {VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER, kDescriptorsPerPool}};
    VkDescriptorPoolCreateInfo info{VK_STRUCTURE_TYPE_DESCRIPTOR_POOL_CREATE_INFO};
    info.maxSets = kSetsPerPool;
    info.poolSizeCount = 2;
    info.pPoolSizes = sizes;
    VkDescriptorPool pool = VK_NULL_HANDLE;
    check(fn.vkCreateDescriptorPool(device_->handle(), &info, nullptr, &pool), "vkCreateDescriptorPool");
    pools_.emplace_back(device_->handle(), pool, fn.vkDestroyDescriptorPool);
    sets_left_ = kSetsPerPool;
  }
  VkDescriptorSetAllocateInfo alloc{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_ALLOCATE_INFO};
  alloc.descriptorPool = pools_.back().get();
  alloc.descriptorSetCount = 1;
  alloc.pSetLayouts = &layout;
  VkDescriptorSet set = VK_NULL_HANDLE;
  check(fn.vkAllocateDescriptorSets(device_->handle(), &alloc, &set), "vkAllocateDescriptorSets");
  --sets_left_;
  return set;
}

}  // namespace vkp::vk
