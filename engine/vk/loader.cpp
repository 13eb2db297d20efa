#include "engine/vk/loader.h"

#include <dlfcn.h>

#include <vector>

#include "core/error.h"

namespace vkp::vk {
namespace {

template <class Fn>
void load(Fn& slot, PFN_vkVoidFunction fn, const char* name, bool required) {
  if (fn == nullptr && required)
    throw Error(ErrorCode::unsupported,
                std::string("the Vulkan loader or driver lacks ") + name + ", which vkpack needs "
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
    throw Error(ErrorCode::no_device,
                "no Vulkan loader found (tried " + tried + "); install libvulkan1, and "
                "mesa-vulkan-drivers for a CPU device");
  void* symbol = dlsym(library_, "vkGetInstanceProcAddr");
  if (symbol == nullptr) {
    dlclose(library_);
    throw Error(ErrorCode::no_device, path_ + " is not a Vulkan loader: it has no vkGetInstanceProcAddr");
  }
  auto get = reinterpret_cast<PFN_vkGetInstanceProcAddr>(symbol);
  global_.vkGetInstanceProcAddr = get;
  load(global_.vkEnumerateInstanceVersion, get(nullptr, "vkEnumerateInstanceVersion"),
       "vkEnumerateInstanceVersion", true);
  load(global_.vkEnumerateInstanceLayerProperties, get(nullptr, "vkEnumerateInstanceLayerProperties"),
       "vkEnumerateInstanceLayerProperties", true);
  load(global_.vkEnumerateInstanceExtensionProperties,
       get(nullptr, "vkEnumerateInstanceExtensionProperties"), "vkEnumerateInstanceExtensionProperties", true);
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
  load(f.vkGetPhysicalDeviceProperties2, get("vkGetPhysicalDeviceProperties2"),
       "vkGetPhysicalDeviceProperties2", true);
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
  load(f.vkCreateDebugUtilsMessengerEXT, get("vkCreateDebugUtilsMessengerEXT"),
       "vkCreateDebugUtilsMessengerEXT", false);
  load(f.vkDestroyDebugUtilsMessengerEXT, get("vkDestroyDebugUtilsMessengerEXT"),
       "vkDestroyDebugUtilsMessengerEXT", false);
  load(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV, get("vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"),
       "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV", false);
  return f;
}

DeviceFns load_device_fns(const InstanceFns& instance_fns, VkDevice device, bool pipeline_statistics) {
  DeviceFns f;
  auto get = [&](const char* name) { return instance_fns.vkGetDeviceProcAddr(device, name); };
  load(f.vkDestroyDevice, get("vkDestroyDevice"), "vkDestroyDevice", true);
  load(f.vkGetDeviceQueue, get("vkGetDeviceQueue"), "vkGetDeviceQueue", true);
  load(f.vkDeviceWaitIdle, get("vkDeviceWaitIdle"), "vkDeviceWaitIdle", true);
  load(f.vkQueueSubmit, get("vkQueueSubmit"), "vkQueueSubmit", true);
  load(f.vkAllocateMemory, get("vkAllocateMemory"), "vkAllocateMemory", true);
  load(f.vkFreeMemory, get("vkFreeMemory"), "vkFreeMemory", true);
  load(f.vkMapMemory, get("vkMapMemory"), "vkMapMemory", true);
  load(f.vkUnmapMemory, get("vkUnmapMemory"), "vkUnmapMemory", true);
  load(f.vkFlushMappedMemoryRanges, get("vkFlushMappedMemoryRanges"), "vkFlushMappedMemoryRanges", true);
  load(f.vkInvalidateMappedMemoryRanges, get("vkInvalidateMappedMemoryRanges"),
       "vkInvalidateMappedMemoryRanges", true);
  load(f.vkCreateBuffer, get("vkCreateBuffer"), "vkCreateBuffer", true);
  load(f.vkDestroyBuffer, get("vkDestroyBuffer"), "vkDestroyBuffer", true);
  load(f.vkGetBufferMemoryRequirements, get("vkGetBufferMemoryRequirements"),
       "vkGetBufferMemoryRequirements", true);
  load(f.vkBindBufferMemory, get("vkBindBufferMemory"), "vkBindBufferMemory", true);
  load(f.vkCreateBufferView, get("vkCreateBufferView"), "vkCreateBufferView", true);
  load(f.vkDestroyBufferView, get("vkDestroyBufferView"), "vkDestroyBufferView", true);
  load(f.vkCreateShaderModule, get("vkCreateShaderModule"), "vkCreateShaderModule", true);
  load(f.vkDestroyShaderModule, get("vkDestroyShaderModule"), "vkDestroyShaderModule", true);
  load(f.vkCreateDescriptorSetLayout, get("vkCreateDescriptorSetLayout"), "vkCreateDescriptorSetLayout", true);
  load(f.vkDestroyDescriptorSetLayout, get("vkDestroyDescriptorSetLayout"), "vkDestroyDescriptorSetLayout", true);
  load(f.vkCreatePipelineLayout, get("vkCreatePipelineLayout"), "vkCreatePipelineLayout", true);
  load(f.vkDestroyPipelineLayout, get("vkDestroyPipelineLayout"), "vkDestroyPipelineLayout", true);
  load(f.vkCreateComputePipelines, get("vkCreateComputePipelines"), "vkCreateComputePipelines", true);
  load(f.vkDestroyPipeline, get("vkDestroyPipeline"), "vkDestroyPipeline", true);
  load(f.vkCreatePipelineCache, get("vkCreatePipelineCache"), "vkCreatePipelineCache", true);
  load(f.vkDestroyPipelineCache, get("vkDestroyPipelineCache"), "vkDestroyPipelineCache", true);
  load(f.vkGetPipelineCacheData, get("vkGetPipelineCacheData"), "vkGetPipelineCacheData", true);
  load(f.vkCreateDescriptorPool, get("vkCreateDescriptorPool"), "vkCreateDescriptorPool", true);
  load(f.vkDestroyDescriptorPool, get("vkDestroyDescriptorPool"), "vkDestroyDescriptorPool", true);
  load(f.vkAllocateDescriptorSets, get("vkAllocateDescriptorSets"), "vkAllocateDescriptorSets", true);
  load(f.vkUpdateDescriptorSets, get("vkUpdateDescriptorSets"), "vkUpdateDescriptorSets", true);
  load(f.vkCreateCommandPool, get("vkCreateCommandPool"), "vkCreateCommandPool", true);
  load(f.vkDestroyCommandPool, get("vkDestroyCommandPool"), "vkDestroyCommandPool", true);
  load(f.vkResetCommandPool, get("vkResetCommandPool"), "vkResetCommandPool", true);
  load(f.vkAllocateCommandBuffers, get("vkAllocateCommandBuffers"), "vkAllocateCommandBuffers", true);
  load(f.vkBeginCommandBuffer, get("vkBeginCommandBuffer"), "vkBeginCommandBuffer", true);
  load(f.vkEndCommandBuffer, get("vkEndCommandBuffer"), "vkEndCommandBuffer", true);
  load(f.vkCmdBindPipeline, get("vkCmdBindPipeline"), "vkCmdBindPipeline", true);
  load(f.vkCmdBindDescriptorSets, get("vkCmdBindDescriptorSets"), "vkCmdBindDescriptorSets", true);
  load(f.vkCmdPushConstants, get("vkCmdPushConstants"), "vkCmdPushConstants", true);
  load(f.vkCmdDispatch, get("vkCmdDispatch"), "vkCmdDispatch", true);
  load(f.vkCmdDispatchBase, get("vkCmdDispatchBase"), "vkCmdDispatchBase", true);
  load(f.vkCmdPipelineBarrier, get("vkCmdPipelineBarrier"), "vkCmdPipelineBarrier", true);
  load(f.vkCmdCopyBuffer, get("vkCmdCopyBuffer"), "vkCmdCopyBuffer", true);
  load(f.vkCmdFillBuffer, get("vkCmdFillBuffer"), "vkCmdFillBuffer", true);
  load(f.vkCmdWriteTimestamp, get("vkCmdWriteTimestamp"), "vkCmdWriteTimestamp", true);
  load(f.vkCmdResetQueryPool, get("vkCmdResetQueryPool"), "vkCmdResetQueryPool", true);
  load(f.vkCreateQueryPool, get("vkCreateQueryPool"), "vkCreateQueryPool", true);
  load(f.vkDestroyQueryPool, get("vkDestroyQueryPool"), "vkDestroyQueryPool", true);
  load(f.vkGetQueryPoolResults, get("vkGetQueryPoolResults"), "vkGetQueryPoolResults", true);
  load(f.vkCreateSemaphore, get("vkCreateSemaphore"), "vkCreateSemaphore", true);
  load(f.vkDestroySemaphore, get("vkDestroySemaphore"), "vkDestroySemaphore", true);
  load(f.vkWaitSemaphores, get("vkWaitSemaphores"), "vkWaitSemaphores", true);
  load(f.vkGetSemaphoreCounterValue, get("vkGetSemaphoreCounterValue"), "vkGetSemaphoreCounterValue", true);
  if (pipeline_statistics) {
    load(f.vkGetPipelineExecutablePropertiesKHR, get("vkGetPipelineExecutablePropertiesKHR"),
         "vkGetPipelineExecutablePropertiesKHR", true);
    load(f.vkGetPipelineExecutableStatisticsKHR, get("vkGetPipelineExecutableStatisticsKHR"),
         "vkGetPipelineExecutableStatisticsKHR", true);
  }
  return f;
}

}  // namespace vkp::vk
