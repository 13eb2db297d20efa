#include "engine/vk/loader.h"

#include <dlfcn.h>

#include <vector>

#include "core/error.h"

namespace vkp::vk {
namespace {

template <class Fn>
void load(Fn& slot, PFN_vkVoidFunction fn, const char* name, bool required) {
  if (fn == nullptr && required)
    throw Error(ErrorCode::unsupported, std::string("the Vulkan loader or driver lacks ") + name +
                                            ", which vkpack needs "
                                            "(Vulkan 1.2 or newer)");
  slot = reinterpret_cast<Fn>(fn);
}

}  // namespace

Loader::Loader(const std::string& path) {
#if defined(__APPLE__)
  const std::vector<std::string> names = {"libvulkan.1.dylib", "libvulkan.dylib", "libMoltenVK.dylib"};
#else
  const std::vector<std::string> names = {"libvulkan.so.1", "libvulkan.so"};
#endif
  std::string tried;
  for (const std::string& name : path.empty() ? names : std::vector<std::string>{path}) {
    library_ = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (library_ != nullptr) {
      path_ = name;
      break;
    }
    tried += (tried.empty() ? "" : ", ") + name;
  }
  if (library_ == nullptr)
    throw Error(ErrorCode::no_device, "no Vulkan loader found (tried " + tried +
                                          "); install libvulkan1, and "
                                          "mesa-vulkan-drivers for a CPU device");
  void* symbol = dlsym(library_, "vkGetInstanceProcAddr");
  if (symbol == nullptr) {
    dlclose(library_);
    throw Error(ErrorCode::no_device, path_ + " is not a Vulkan loader: it has no vkGetInstanceProcAddr");
  }
  auto get = reinterpret_cast<PFN_vkGetInstanceProcAddr>(symbol);
  global_.vkGetInstanceProcAddr = get;
  load(global_.vkEnumerateInstanceVersion, get(nullptr, "vkEnumerateInstanceVersion"), "vkEnumerateInstanceVersion",
       true);
  load(global_.vkEnumerateInstanceLayerProperties, get(nullptr, "vkEnumerateInstanceLayerProperties"),
       "vkEnumerateInstanceLayerProperties", true);
  load(global_.vkEnumerateInstanceExtensionProperties, get(nullptr, "vkEnumerateInstanceExtensionProperties"),
       "vkEnumerateInstanceExtensionProperties", true);
  load(global_.vkCreateInstance, get(nullptr, "vkCreateInstance"), "vkCreateInstance", true);
}

Loader::~Loader() {
  if (library_ != nullptr) dlclose(library_);
}

InstanceFns load_instance_fns(const GlobalFns& global, VkInstance instance) {
  InstanceFns f;
  auto get = [&](const char* name) { return global.vkGetInstanceProcAddr(instance, name); };
  load(f.vkDestroyInstance, get("vkDestroyInstance"), "vkDestroyInstance", true);
  load(f.vkEnumeratePhysicalDevices, get("vkEnumeratePhysicalDevices"), "vkEnumeratePhysicalDevices", true);
  load(f.vkGetPhysicalDeviceProperties2, get("vkGetPhysicalDeviceProperties2"), "vkGetPhysicalDeviceProperties2", true);
  load(f.vkGetPhysicalDeviceFeatures2, get("vkGetPhysicalDeviceFeatures2"), "vkGetPhysicalDeviceFeatures2", true);
  load(f.vkGetPhysicalDeviceMemoryProperties, get("vkGetPhysicalDeviceMemoryProperties"),
       "vkGetPhysicalDeviceMemoryProperties", true);
  load(f.vkGetPhysicalDeviceFormatProperties, get("vkGetPhysicalDeviceFormatProperties"),
       "vkGetPhysicalDeviceFormatProperties", true);
  load(f.vkGetPhysicalDeviceQueueFamilyProperties, get("vkGetPhysicalDeviceQueueFamilyProperties"),
       "vkGetPhysicalDeviceQueueFamilyProperties", true);
  load(f.vkEnumerateDeviceExtensionProperties, get("vkEnumerateDeviceExtensionProperties"),
       "vkEnumerateDeviceExtensionProperties", true);
  load(f.vkCreateDevice, get("vkCreateDevice"), "vkCreateDevice", true);
  load(f.vkGetDeviceProcAddr, get("vkGetDeviceProcAddr"), "vkGetDeviceProcAddr", true);
  load(f.vkCreateDebugUtilsMessengerEXT, get("vkCreateDebugUtilsMessengerEXT"), "vkCreateDebugUtilsMessengerEXT",
       false);
  load(f.vkDestroyDebugUtilsMessengerEXT, get("vkDestroyDebugUtilsMessengerEXT"), "vkDestroyDebugUtilsMessengerEXT",
       false);
  load(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV, get("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"),
       "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", false);
  return f;
}

namespace {

// Each loads its share of DeviceFns through `need(slot, name)`, which throws when the
// driver lacks the function.
template <class Need>
void load_queue_and_memory_fns(DeviceFns& f, Need need) {
  need(f.vkDestroyDevice, "vkDestroyDevice");
  need(f.vkGetDeviceQueue, "vkGetDeviceQueue");
  need(f.vkDeviceWaitIdle, "vkDeviceWaitIdle");
  need(f.vkQueueSubmit, "vkQueueSubmit");
  need(f.vkAllocateMemory, "vkAllocateMemory");
  need(f.vkFreeMemory, "vkFreeMemory");
  need(f.vkMapMemory, "vkMapMemory");
  need(f.vkUnmapMemory, "vkUnmapMemory");
  need(f.vkFlushMappedMemoryRanges, "vkFlushMappedMemoryRanges");
  need(f.vkInvalidateMappedMemoryRanges, "vkInvalidateMappedMemoryRanges");
  need(f.vkCreateBuffer, "vkCreateBuffer");
  need(f.vkDestroyBuffer, "vkDestroyBuffer");
  need(f.vkGetBufferMemoryRequirements, "vkGetBufferMemoryRequirements");
  need(f.vkBindBufferMemory, "vkBindBufferMemory");
  need(f.vkCreateBufferView, "vkCreateBufferView");
  need(f.vkDestroyBufferView, "vkDestroyBufferView");
}

template <class Need>
void load_pipeline_fns(DeviceFns& f, Need need) {
  need(f.vkCreateShaderModule, "vkCreateShaderModule");
  need(f.vkDestroyShaderModule, "vkDestroyShaderModule");
  need(f.vkCreateDescriptorSetLayout, "vkCreateDescriptorSetLayout");
  need(f.vkDestroyDescriptorSetLayout, "vkDestroyDescriptorSetLayout");
  need(f.vkCreatePipelineLayout, "vkCreatePipelineLayout");
  need(f.vkDestroyPipelineLayout, "vkDestroyPipelineLayout");
  need(f.vkCreateComputePipelines, "vkCreateComputePipelines");
  need(f.vkDestroyPipeline, "vkDestroyPipeline");
  need(f.vkCreatePipelineCache, "vkCreatePipelineCache");
  need(f.vkDestroyPipelineCache, "vkDestroyPipelineCache");
  need(f.vkGetPipelineCacheData, "vkGetPipelineCacheData");
  need(f.vkCreateDescriptorPool, "vkCreateDescriptorPool");
  need(f.vkDestroyDescriptorPool, "vkDestroyDescriptorPool");
  need(f.vkAllocateDescriptorSets, "vkAllocateDescriptorSets");
  need(f.vkUpdateDescriptorSets, "vkUpdateDescriptorSets");
}

template <class Need>
void load_command_fns(DeviceFns& f, Need need) {
  need(f.vkCreateCommandPool, "vkCreateCommandPool");
  need(f.vkDestroyCommandPool, "vkDestroyCommandPool");
  need(f.vkResetCommandPool, "vkResetCommandPool");
  need(f.vkAllocateCommandBuffers, "vkAllocateCommandBuffers");
  need(f.vkBeginCommandBuffer, "vkBeginCommandBuffer");
  need(f.vkEndCommandBuffer, "vkEndCommandBuffer");
  need(f.vkCmdBindPipeline, "vkCmdBindPipeline");
  need(f.vkCmdBindDescriptorSets, "vkCmdBindDescriptorSets");
  need(f.vkCmdPushConstants, "vkCmdPushConstants");
  need(f.vkCmdDispatch, "vkCmdDispatch");
  need(f.vkCmdDispatchBase, "vkCmdDispatchBase");
  need(f.vkCmdPipelineBarrier, "vkCmdPipelineBarrier");
  need(f.vkCmdCopyBuffer, "vkCmdCopyBuffer");
  need(f.vkCmdFillBuffer, "vkCmdFillBuffer");
  need(f.vkCmdWriteTimestamp, "vkCmdWriteTimestamp");
  need(f.vkCmdResetQueryPool, "vkCmdResetQueryPool");
  need(f.vkCreateQueryPool, "vkCreateQueryPool");
  need(f.vkDestroyQueryPool, "vkDestroyQueryPool");
  need(f.vkGetQueryPoolResults, "vkGetQueryPoolResults");
  need(f.vkCreateSemaphore, "vkCreateSemaphore");
  need(f.vkDestroySemaphore, "vkDestroySemaphore");
  need(f.vkWaitSemaphores, "vkWaitSemaphores");
  need(f.vkGetSemaphoreCounterValue, "vkGetSemaphoreCounterValue");
}

}  // namespace

DeviceFns load_device_fns(const InstanceFns& instance_fns, VkDevice device, bool pipeline_statistics) {
  DeviceFns f;
  auto need = [&](auto& slot, const char* name) {
    load(slot, instance_fns.vkGetDeviceProcAddr(device, name), name, true);
  };
  load_queue_and_memory_fns(f, need);
  load_pipeline_fns(f, need);
  load_command_fns(f, need);
  if (pipeline_statistics) {
    need(f.vkGetPipelineExecutablePropertiesKHR, "vkGetPipelineExecutablePropertiesKHR");
    need(f.vkGetPipelineExecutableStatisticsKHR, "vkGetPipelineExecutableStatisticsKHR");
  }
  return f;
}

}  // namespace vkp::vk
