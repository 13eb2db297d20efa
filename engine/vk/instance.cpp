#include "engine/vk/instance.h"

#include <algorithm>
#include <cstring>

#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {

struct Instance::Messenger {
  std::function<void(const ValidationMessage&)> on_message;
};

namespace {

constexpr const char* kValidationLayer = "VK_LAYER_KHRONOS_validation";
constexpr const char* kNoDevice =
    "no Vulkan device found; install mesa-vulkan-drivers for a CPU device (lavapipe), "
    "or your GPU vendor's Vulkan driver";

VKAPI_ATTR VkBool32 VKAPI_CALL on_debug_message(VkDebugUtilsMessageSeverityFlagBitsEXT severity,
                                                VkDebugUtilsMessageTypeFlagsEXT,
                                                const VkDebugUtilsMessengerCallbackDataEXT* data, void* user) {
  auto* messenger = static_cast<const Instance::Messenger*>(user);
  ValidationMessage message{(severity & VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT) != 0,
                            data && data->pMessage ? data->pMessage : "(no message)"};
  if (messenger->on_message)
    messenger->on_message(message);
  else
    log_warn("vulkan {}: {}", message.error ? "error" : "warning", message.text);
  return VK_FALSE;
}

bool has_layer(const GlobalFns& g, const char* name) {
  std::uint32_t count = 0;
  check(g.vkEnumerateInstanceLayerProperties(&count, nullptr), "vkEnumerateInstanceLayerProperties");
  std::vector<VkLayerProperties> layers(count);
  check(g.vkEnumerateInstanceLayerProperties(&count, layers.data()), "vkEnumerateInstanceLayerProperties");
  return std::any_of(layers.begin(), layers.end(),
                     [&](const VkLayerProperties& l) { return std::strcmp(l.layerName, name) == 0; });
}

std::vector<std::string> instance_extensions(const GlobalFns& g, const char* layer) {
  std::uint32_t count = 0;
  check(g.vkEnumerateInstanceExtensionProperties(layer, &count, nullptr), "vkEnumerateInstanceExtensionProperties");
  std::vector<VkExtensionProperties> props(count);
  check(g.vkEnumerateInstanceExtensionProperties(layer, &count, props.data()),
        "vkEnumerateInstanceExtensionProperties");
  std::vector<std::string> names;
  for (const auto& p : props) names.emplace_back(p.extensionName);
  return names;
}

bool contains(const std::vector<std::string>& names, const char* name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

const char* component_name(VkComponentTypeNV type) {
  switch (type) {
    case VK_COMPONENT_TYPE_FLOAT16_NV: return "float16";
    case VK_COMPONENT_TYPE_FLOAT32_NV: return "float32";
    case VK_COMPONENT_TYPE_FLOAT64_NV: return "float64";
    case VK_COMPONENT_TYPE_SINT8_NV: return "int8";
    case VK_COMPONENT_TYPE_UINT8_NV: return "uint8";
    case VK_COMPONENT_TYPE_SINT32_NV: return "int32";
    case VK_COMPONENT_TYPE_UINT32_NV: return "uint32";
    default: return "other";
  }
}

// The subgroup-scope shapes of VK_NV_cooperative_matrix whose A and B share a type.
std::vector<MatrixShape> matrix_shapes(const InstanceFns& f, VkPhysicalDevice pd) {
  std::vector<MatrixShape> shapes;
  if (!f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV) return shapes;
  std::uint32_t count = 0;
  check(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, nullptr),
        "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  std::vector<VkCooperativeMatrixPropertiesNV> props(count, {VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV});
  check(f.vkGetPhysicalDeviceCooperativeMatrixPropertiesNV(pd, &count, props.data()),
        "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV");
  for (const auto& p : props)
    if (p.scope == VK_SCOPE_SUBGROUP_NV && p.AType == p.BType && p.CType == p.DType)
      shapes.push_back({p.MSize, p.NSize, p.KSize, component_name(p.AType), component_name(p.DType)});
  return shapes;
}

// The limits vkpack reads from the device's properties.
DeviceLimits limits_of(const VkPhysicalDeviceLimits& p, const VkPhysicalDeviceSubgroupProperties& subgroup,
                       const VkPhysicalDeviceMaintenance3Properties& maintenance3) {
  DeviceLimits l;
  l.max_storage_buffer_range = p.maxStorageBufferRange;
  l.min_storage_buffer_offset_alignment = p.minStorageBufferOffsetAlignment;
  l.min_texel_buffer_offset_alignment = p.minTexelBufferOffsetAlignment;
  l.max_texel_buffer_elements = p.maxTexelBufferElements;
  l.max_memory_allocation_size = maintenance3.maxMemoryAllocationSize;
  for (int i = 0; i < 3; ++i) {
    l.max_workgroup_count[i] = p.maxComputeWorkGroupCount[i];
    l.max_workgroup_size[i] = p.maxComputeWorkGroupSize[i];
  }
  l.max_workgroup_invocations = p.maxComputeWorkGroupInvocations;
  l.max_shared_memory_bytes = p.maxComputeSharedMemorySize;
  l.max_push_constants_bytes = p.maxPushConstantsSize;
  l.max_storage_buffers_per_stage = p.maxPerStageDescriptorStorageBuffers;
  l.non_coherent_atom_size = p.nonCoherentAtomSize;
  l.subgroup_size = l.min_subgroup_size = l.max_subgroup_size = subgroup.subgroupSize;
  l.timestamp_period_ns = p.timestampPeriod;
  return l;
}

// Names, versions, the pipeline cache's UUID and the limits, from the properties.
void describe_properties(const InstanceFns& f, VkPhysicalDevice pd, PhysicalDeviceInfo& info) {
  VkPhysicalDeviceSubgroupProperties subgroup{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_PROPERTIES};
  VkPhysicalDeviceDriverProperties driver{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_DRIVER_PROPERTIES};
  VkPhysicalDeviceMaintenance3Properties maintenance3{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_3_PROPERTIES};
  VkPhysicalDeviceProperties2 props{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
  props.pNext = &subgroup;
  subgroup.pNext = &driver;
  driver.pNext = &maintenance3;
  f.vkGetPhysicalDeviceProperties2(pd, &props);
  const VkPhysicalDeviceProperties& p = props.properties;
  info.name = p.deviceName;
  info.type = p.deviceType;
  info.vendor_id = p.vendorID;
  info.device_id = p.deviceID;
  info.api_version = p.apiVersion;
  info.driver_version = p.driverVersion;
  info.driver_name = driver.driverName;
  info.driver_info = driver.driverInfo;
  std::memcpy(info.pipeline_cache_uuid, p.pipelineCacheUUID, VK_UUID_SIZE);
  info.limits = limits_of(p.limits, subgroup, maintenance3);
}

// Timestamps on a compute family, the memory heaps, and texel buffers of the formats the
// kernels read.
void describe_queues_memory_formats(const InstanceFns& f, VkPhysicalDevice pd, PhysicalDeviceInfo& info) {
  std::uint32_t family_count = 0;
  f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, nullptr);
  std::vector<VkQueueFamilyProperties> families(family_count);
  f.vkGetPhysicalDeviceQueueFamilyProperties(pd, &family_count, families.data());
  for (const auto& q : families)
    if ((q.queueFlags & VK_QUEUE_COMPUTE_BIT) && q.timestampValidBits > 0) info.limits.timestamps = true;

  VkPhysicalDeviceMemoryProperties memory{};
  f.vkGetPhysicalDeviceMemoryProperties(pd, &memory);
  for (std::uint32_t i = 0; i < memory.memoryHeapCount; ++i)
    info.heaps.push_back(
        {memory.memoryHeaps[i].size, (memory.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT) != 0});

  auto texels = [&](VkFormat format) {
    VkFormatProperties support{};
    f.vkGetPhysicalDeviceFormatProperties(pd, format, &support);
    return (support.bufferFeatures & VK_FORMAT_FEATURE_UNIFORM_TEXEL_BUFFER_BIT) != 0;
  };
  info.float_texels = texels(VK_FORMAT_R32G32B32A32_SFLOAT) && texels(VK_FORMAT_R32G32B32A32_UINT) &&
                      texels(VK_FORMAT_R32G32B32A32_SINT);
  info.half_texels = texels(VK_FORMAT_R16G16B16A16_SFLOAT);
}

// The 1.1 and 1.2 features vkpack uses. vkGetPhysicalDeviceFeatures2 and their structs
// need a 1.2 device (an older one is listed, and refused when opened): false for one.
bool describe_features(const InstanceFns& f, VkPhysicalDevice pd, PhysicalDeviceInfo& info) {
  if (VK_API_VERSION_MINOR(info.api_version) < 2 && VK_API_VERSION_MAJOR(info.api_version) <= 1) return false;
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  features.pNext = &v12;
  v12.pNext = &v11;
  f.vkGetPhysicalDeviceFeatures2(pd, &features);
  info.timeline_semaphore = v12.timelineSemaphore;
  info.shader_float16 = v12.shaderFloat16;
  info.storage_buffer_16bit = v11.storageBuffer16BitAccess;
  info.vulkan_memory_model = v12.vulkanMemoryModel;
  return true;
}

// The extensions vkpack may use and, where offered (on a 1.2 device: `features2`), their
// features: pipeline statistics, cooperative matrices, the subgroup size range.
void describe_extensions(const InstanceFns& f, VkPhysicalDevice pd, bool features2, PhysicalDeviceInfo& info) {
  std::uint32_t ext_count = 0;
  check(f.vkEnumerateDeviceExtensionProperties(pd, nullptr, &ext_count, nullptr),
        "vkEnumerateDeviceExtensionProperties");
  std::vector<VkExtensionProperties> exts(ext_count);
  check(f.vkEnumerateDeviceExtensionProperties(pd, nullptr, &ext_count, exts.data()),
        "vkEnumerateDeviceExtensionProperties");
  bool size_control = false;
  for (const auto& e : exts) {
    if (std::strcmp(e.extensionName, "VK_KHR_portability_subset") == 0) info.portability_subset = true;
    if (std::strcmp(e.extensionName, "VK_EXT_subgroup_size_control") == 0) size_control = true;
    if (std::strcmp(e.extensionName, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME) == 0) info.cooperative_matrix = true;
    if (std::strcmp(e.extensionName, VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME) == 0)
      info.pipeline_statistics = true;
  }
  info.pipeline_statistics = info.pipeline_statistics && features2;
  info.cooperative_matrix = info.cooperative_matrix && features2;
  if (info.pipeline_statistics) {
    VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR exec{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
    VkPhysicalDeviceFeatures2 more{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    more.pNext = &exec;
    f.vkGetPhysicalDeviceFeatures2(pd, &more);
    info.pipeline_statistics = exec.pipelineExecutableInfo == VK_TRUE;
  }
  if (info.cooperative_matrix) {
    VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
    VkPhysicalDeviceFeatures2 more{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
    more.pNext = &matrix;
    f.vkGetPhysicalDeviceFeatures2(pd, &more);
    info.cooperative_matrix = matrix.cooperativeMatrix == VK_TRUE;
    if (info.cooperative_matrix) info.matrix_shapes = matrix_shapes(f, pd);
  }
  // The range a pipeline may ask for; only the default size is used by vkpack's kernels.
  if (size_control) {
    VkPhysicalDeviceSubgroupSizeControlPropertiesEXT range{
        VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES_EXT};
    VkPhysicalDeviceProperties2 more{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2};
    more.pNext = &range;
    f.vkGetPhysicalDeviceProperties2(pd, &more);
    info.limits.min_subgroup_size = range.minSubgroupSize;
    info.limits.max_subgroup_size = range.maxSubgroupSize;
  }
}

// The layers, extensions and flags an instance is created with; whether the debug-utils
// messenger is available (from the loader, or from the validation layer).
struct InstanceRequest {
  std::vector<const char*> layers, extensions;
  VkInstanceCreateFlags flags = 0;
  bool debug_utils = false;
};
InstanceRequest instance_request(const GlobalFns& g, bool validation) {
  InstanceRequest r;
  const std::vector<std::string> available = instance_extensions(g, nullptr);
  if (validation) {
    if (!has_layer(g, kValidationLayer))
      throw Error(ErrorCode::unsupported,
                  "validation was requested but VK_LAYER_KHRONOS_validation is not installed; "
                  "install vulkan-validationlayers");
    r.layers.push_back(kValidationLayer);
  }
  r.debug_utils = contains(available, VK_EXT_DEBUG_UTILS_EXTENSION_NAME) ||
                  (validation && contains(instance_extensions(g, kValidationLayer), VK_EXT_DEBUG_UTILS_EXTENSION_NAME));
  if (validation && r.debug_utils) r.extensions.push_back(VK_EXT_DEBUG_UTILS_EXTENSION_NAME);
  if (contains(available, "VK_KHR_portability_enumeration")) {  // MoltenVK lists devices only with it
    r.extensions.push_back("VK_KHR_portability_enumeration");
    r.flags |= 0x00000001;  // VK_INSTANCE_CREATE_ENUMERATE_PORTABILITY_BIT_KHR
  }
  return r;
}

// Warnings and errors of every kind, to on_debug_message with `messenger` (the
// Instance::Messenger that reports them).
VkDebugUtilsMessengerCreateInfoEXT messenger_create_info(void* messenger) {
  VkDebugUtilsMessengerCreateInfoEXT info{VK_STRUCTURE_TYPE_DEBUG_UTILS_MESSENGER_CREATE_INFO_EXT};
  info.messageSeverity =
      VK_DEBUG_UTILS_MESSAGE_SEVERITY_WARNING_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_SEVERITY_ERROR_BIT_EXT;
  info.messageType = VK_DEBUG_UTILS_MESSAGE_TYPE_GENERAL_BIT_EXT | VK_DEBUG_UTILS_MESSAGE_TYPE_VALIDATION_BIT_EXT |
                     VK_DEBUG_UTILS_MESSAGE_TYPE_PERFORMANCE_BIT_EXT;
  info.pfnUserCallback = on_debug_message;
  info.pUserData = messenger;
  return info;
}

std::vector<VkValidationFeatureEnableEXT> validation_features_enabled(const InstanceOptions& options) {
  std::vector<VkValidationFeatureEnableEXT> enabled;
  if (options.synchronization_validation)
    enabled.push_back(VK_VALIDATION_FEATURE_ENABLE_SYNCHRONIZATION_VALIDATION_EXT);
  if (options.best_practices) enabled.push_back(VK_VALIDATION_FEATURE_ENABLE_BEST_PRACTICES_EXT);
  return enabled;
}

// The instance's physical devices; Error(no_device) when there are none.
std::vector<VkPhysicalDevice> physical_devices(const InstanceFns& f, VkInstance instance) {
  std::uint32_t count = 0;
  VkResult listed = f.vkEnumeratePhysicalDevices(instance, &count, nullptr);
  std::vector<VkPhysicalDevice> handles(count);
  if (listed >= 0 && count > 0) listed = f.vkEnumeratePhysicalDevices(instance, &count, handles.data());
  if (listed == VK_ERROR_INITIALIZATION_FAILED || count == 0) throw Error(ErrorCode::no_device, kNoDevice);
  check(listed, "vkEnumeratePhysicalDevices");
  handles.resize(count);
  return handles;
}

PhysicalDeviceInfo describe(const InstanceFns& f, VkPhysicalDevice pd, int index) {
  PhysicalDeviceInfo info;
  info.index = index;
  info.handle = pd;
  describe_properties(f, pd, info);
  describe_queues_memory_formats(f, pd, info);
  const bool features2 = describe_features(f, pd, info);
  describe_extensions(f, pd, features2, info);
  return info;
}

}  // namespace

Instance::Instance(InstanceOptions options)
    : options_(std::move(options)), loader_(std::make_unique<Loader>(options_.loader_path)) {
  env::check_all();  // a mistyped VKPACK_* value stops the program here, naming it
  const GlobalFns& g = loader_->global();
  std::uint32_t loader_version = 0;
  check(g.vkEnumerateInstanceVersion(&loader_version), "vkEnumerateInstanceVersion");
  if (loader_version < VK_API_VERSION_1_2)
    throw Error(ErrorCode::unsupported, "the Vulkan loader " + loader_->path() + " supports Vulkan " +
                                            api_version_string(loader_version) + "; vkpack needs 1.2");

  const InstanceRequest request = instance_request(g, options_.validation);
  const bool debug_utils = request.debug_utils;

  messenger_ = std::make_unique<Messenger>();
  messenger_->on_message = options_.on_message;
  VkDebugUtilsMessengerCreateInfoEXT messenger_info = messenger_create_info(messenger_.get());
  const std::vector<VkValidationFeatureEnableEXT> enabled = validation_features_enabled(options_);
  VkValidationFeaturesEXT validation_features{VK_STRUCTURE_TYPE_VALIDATION_FEATURES_EXT};
  validation_features.enabledValidationFeatureCount = static_cast<std::uint32_t>(enabled.size());
  validation_features.pEnabledValidationFeatures = enabled.data();

  VkApplicationInfo app{VK_STRUCTURE_TYPE_APPLICATION_INFO};
  app.pApplicationName = "vkpack";
  app.pEngineName = "vkpack";
  app.apiVersion = VK_API_VERSION_1_2;
  VkInstanceCreateInfo info{VK_STRUCTURE_TYPE_INSTANCE_CREATE_INFO};
  info.flags = request.flags;
  info.pApplicationInfo = &app;
  info.enabledLayerCount = static_cast<std::uint32_t>(request.layers.size());
  info.ppEnabledLayerNames = request.layers.data();
  info.enabledExtensionCount = static_cast<std::uint32_t>(request.extensions.size());
  info.ppEnabledExtensionNames = request.extensions.data();
  if (options_.validation && debug_utils) {
    info.pNext = &messenger_info;
    if (!enabled.empty()) messenger_info.pNext = &validation_features;
  }
  VkInstance instance = VK_NULL_HANDLE;
  const VkResult created = g.vkCreateInstance(&info, nullptr, &instance);
  if (created == VK_ERROR_INCOMPATIBLE_DRIVER) throw Error(ErrorCode::no_device, kNoDevice);
  check(created, "vkCreateInstance");
  // From here the handles own what is made: a throw below destroys it in order.
  fns_ = load_instance_fns(g, instance);
  instance_ = InstanceHandle(instance, fns_.vkDestroyInstance);

  if (options_.validation && debug_utils && fns_.vkCreateDebugUtilsMessengerEXT) {
    messenger_info.pNext = nullptr;
    VkDebugUtilsMessengerEXT messenger = VK_NULL_HANDLE;
    check(fns_.vkCreateDebugUtilsMessengerEXT(instance, &messenger_info, nullptr, &messenger),
          "vkCreateDebugUtilsMessengerEXT");
    debug_messenger_ = DebugMessengerHandle(instance, messenger, fns_.vkDestroyDebugUtilsMessengerEXT);
  }

  const std::vector<VkPhysicalDevice> handles = physical_devices(fns_, instance);
  for (std::size_t i = 0; i < handles.size(); ++i) devices_.push_back(describe(fns_, handles[i], static_cast<int>(i)));
}

Instance::~Instance() = default;

const PhysicalDeviceInfo& Instance::device(int index) const {
  if (index < 0 || index >= static_cast<int>(devices_.size())) {
    std::string list;
    for (const auto& d : devices_) list += "\n  " + std::to_string(d.index) + ": " + d.name;
    throw Error(ErrorCode::invalid_argument,
                "no Vulkan device with index " + std::to_string(index) + "; the devices are:" + list);
  }
  return devices_[static_cast<std::size_t>(index)];
}

std::string_view to_string(VkPhysicalDeviceType type) {
  switch (type) {
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU: return "integrated GPU";
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU: return "discrete GPU";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU: return "virtual GPU";
    case VK_PHYSICAL_DEVICE_TYPE_CPU: return "CPU";
    default: return "other";
  }
}

std::string_view vendor_name(std::uint32_t vendor_id) {
  switch (vendor_id) {
    case 0x1002: return "AMD";
    case 0x1010: return "ImgTec";
    case 0x10DE: return "NVIDIA";
    case 0x13B5: return "ARM";
    case 0x5143: return "Qualcomm";
    case 0x8086: return "Intel";
    case 0x106B: return "Apple";
    case 0x10005: return "Mesa";
    default: return "unknown";
  }
}

std::string api_version_string(std::uint32_t v) {
  return std::to_string(VK_API_VERSION_MAJOR(v)) + "." + std::to_string(VK_API_VERSION_MINOR(v)) + "." +
         std::to_string(VK_API_VERSION_PATCH(v));
}

std::string driver_version_string(const PhysicalDeviceInfo& info) {
  const std::uint32_t v = info.driver_version;
  if (info.vendor_id == 0x10DE)  // NVIDIA: 10.8.8.6 bits
    return std::to_string(v >> 22) + "." + std::to_string((v >> 14) & 0xff) + "." + std::to_string((v >> 6) & 0xff) +
           "." + std::to_string(v & 0x3f);
  return api_version_string(v);
}

}  // namespace vkp::vk
