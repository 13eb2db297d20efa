// DeviceHandle: the one owner of a Vulkan object created from a VkDevice.
//
// A move-only wrapper that does nothing but destroy its handle with the matching
// vkDestroy*/vkFree* call. Declare members in the order that makes teardown correct:
// C++ destroys them in reverse.
#pragma once

#include <vulkan/vulkan_core.h>

#include <utility>

namespace vkp::vk {

// Destroy is any PFN of the form void(VkDevice, T, const VkAllocationCallbacks*).
template <class T, class Destroy>
class DeviceHandle {
 public:
  DeviceHandle() = default;
  DeviceHandle(VkDevice device, T handle, Destroy destroy)
      : device_(device), handle_(handle), destroy_(destroy) {}
  DeviceHandle(DeviceHandle&& other) noexcept
      : device_(other.device_), handle_(std::exchange(other.handle_, T{})), destroy_(other.destroy_) {}
  DeviceHandle& operator=(DeviceHandle&& other) noexcept {
    if (this != &other) {
      reset();
      device_ = other.device_;
      handle_ = std::exchange(other.handle_, T{});
      destroy_ = other.destroy_;
    }
    return *this;
  }
  DeviceHandle(const DeviceHandle&) = delete;
  DeviceHandle& operator=(const DeviceHandle&) = delete;
  ~DeviceHandle() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }

  void reset() {
    if (handle_ != T{}) destroy_(device_, std::exchange(handle_, T{}), nullptr);
  }

 private:
  VkDevice device_ = VK_NULL_HANDLE;
  T handle_{};
  Destroy destroy_ = nullptr;
};

using BufferHandle = DeviceHandle<VkBuffer, PFN_vkDestroyBuffer>;
using MemoryHandle = DeviceHandle<VkDeviceMemory, PFN_vkFreeMemory>;
using ShaderModuleHandle = DeviceHandle<VkShaderModule, PFN_vkDestroyShaderModule>;
using DescriptorSetLayoutHandle = DeviceHandle<VkDescriptorSetLayout, PFN_vkDestroyDescriptorSetLayout>;
using PipelineLayoutHandle = DeviceHandle<VkPipelineLayout, PFN_vkDestroyPipelineLayout>;
using PipelineHandle = DeviceHandle<VkPipeline, PFN_vkDestroyPipeline>;
using PipelineCacheHandle = DeviceHandle<VkPipelineCache, PFN_vkDestroyPipelineCache>;
using DescriptorPoolHandle = DeviceHandle<VkDescriptorPool, PFN_vkDestroyDescriptorPool>;
using CommandPoolHandle = DeviceHandle<VkCommandPool, PFN_vkDestroyCommandPool>;
using QueryPoolHandle = DeviceHandle<VkQueryPool, PFN_vkDestroyQueryPool>;
using SemaphoreHandle = DeviceHandle<VkSemaphore, PFN_vkDestroySemaphore>;

}  // namespace vkp::vk
