// The one ownership idiom of every Vulkan object vkpack makes: a move-only wrapper that
// does nothing but destroy its handle with the matching vkDestroy*/vkFree* call.
//   ChildHandle<Parent, T, Destroy>  an object made from a VkDevice (DeviceHandle) or a
//                                    VkInstance (the debug messenger)
//   RootHandle<T, Destroy>           VkInstance and VkDevice themselves
// Declare members in the order that makes teardown correct: C++ destroys them in reverse,
// so a parent is declared before its children.
#pragma once

#include <vulkan/vulkan_core.h>

#include <utility>

namespace vkp::vk {

// Destroy is any PFN of the form void(Parent, T, const VkAllocationCallbacks*).
template <class Parent, class T, class Destroy>
class ChildHandle {
 public:
  ChildHandle() = default;
  ChildHandle(Parent parent, T handle, Destroy destroy) : parent_(parent), handle_(handle), destroy_(destroy) {}
  ChildHandle(ChildHandle&& other) noexcept
      : parent_(other.parent_), handle_(std::exchange(other.handle_, T{})), destroy_(other.destroy_) {}
  ChildHandle& operator=(ChildHandle&& other) noexcept {
    if (this != &other) {
      reset();
      parent_ = other.parent_;
      handle_ = std::exchange(other.handle_, T{});
      destroy_ = other.destroy_;
    }
    return *this;
  }
  ChildHandle(const ChildHandle&) = delete;
  ChildHandle& operator=(const ChildHandle&) = delete;
  ~ChildHandle() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }

  void reset() {
    if (handle_ != T{}) destroy_(parent_, std::exchange(handle_, T{}), nullptr);
  }

 private:
  Parent parent_{};
  T handle_{};
  Destroy destroy_ = nullptr;
};

// Destroy is any PFN of the form void(T, const VkAllocationCallbacks*).
template <class T, class Destroy>
class RootHandle {
 public:
  RootHandle() = default;
  RootHandle(T handle, Destroy destroy) : handle_(handle), destroy_(destroy) {}
  RootHandle(RootHandle&& other) noexcept : handle_(std::exchange(other.handle_, T{})), destroy_(other.destroy_) {}
  RootHandle& operator=(RootHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, T{});
      destroy_ = other.destroy_;
    }
    return *this;
  }
  RootHandle(const RootHandle&) = delete;
  RootHandle& operator=(const RootHandle&) = delete;
  ~RootHandle() { reset(); }

  T get() const { return handle_; }
  explicit operator bool() const { return handle_ != T{}; }

  void reset() {
    if (handle_ != T{}) destroy_(std::exchange(handle_, T{}), nullptr);
  }

 private:
  T handle_{};
  Destroy destroy_ = nullptr;
};

template <class T, class Destroy>
using DeviceHandle = ChildHandle<VkDevice, T, Destroy>;
using InstanceHandle = RootHandle<VkInstance, PFN_vkDestroyInstance>;
using DeviceRootHandle = RootHandle<VkDevice, PFN_vkDestroyDevice>;
using DebugMessengerHandle = ChildHandle<VkInstance, VkDebugUtilsMessengerEXT, PFN_vkDestroyDebugUtilsMessengerEXT>;

using BufferHandle = DeviceHandle<VkBuffer, PFN_vkDestroyBuffer>;
using BufferViewHandle = DeviceHandle<VkBufferView, PFN_vkDestroyBufferView>;
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
