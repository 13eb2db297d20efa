#include "engine/vk/device.h"

#include <algorithm>
#include <cstdlib>

#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/internal/check.h"
#include "engine/vk/limits_profile.h"
#include "engine/vk/transfer.h"

namespace vkp::vk {
namespace {

std::vector<VkQueueFamilyProperties> queue_families(const InstanceFns& f, const PhysicalDeviceInfo& info) {
  std::uint32_t count = 0;
  f.vkGetPhysicalDeviceQueueFamilyProperties(info.handle, &count, nullptr);
  std::vector<VkQueueFamilyProperties> families(count);
  f.vkGetPhysicalDeviceQueueFamilyProperties(info.handle, &count, families.data());
  return families;
}

std::uint32_t pick_compute_family(const std::vector<VkQueueFamilyProperties>& families,
                                  const PhysicalDeviceInfo& info) {
  for (std::uint32_t i = 0; i < families.size(); ++i)
    if (families[i].queueFlags & VK_QUEUE_COMPUTE_BIT) return i;
  throw Error(ErrorCode::unsupported,
              "device " + std::to_string(info.index) + " (" + info.name + ") has no compute queue");
}

// The transfer queue, or none.
std::optional<QueueSlot> pick_transfer_queue(const std::vector<VkQueueFamilyProperties>& families,
                                             std::uint32_t compute_family, TransferQueue want) {
  if (want == TransferQueue::none) return std::nullopt;
  for (std::uint32_t i = 0; i < families.size(); ++i) {
    const VkQueueFlags flags = families[i].queueFlags;
    if ((flags & VK_QUEUE_TRANSFER_BIT) && !(flags & (VK_QUEUE_COMPUTE_BIT | VK_QUEUE_GRAPHICS_BIT)))
      return QueueSlot{i, 0};
  }
  if (want == TransferQueue::automatic) return std::nullopt;
  return QueueSlot{compute_family, families[compute_family].queueCount > 1 ? 1u : 0u};
}

// VKPACK_MEMORY (docs/guide.md, Environment) picks the mode of devices whose options leave it
// automatic: this is how a whole test suite runs staged.
MemoryMode requested_memory_mode(MemoryMode option) {
  if (option != MemoryMode::automatic) return option;
  const std::optional<std::string> mode = env::choice("VKPACK_MEMORY");
  return mode ? parse_memory_mode(*mode, "VKPACK_MEMORY") : MemoryMode::automatic;
}

// VKPACK_LIMITS_PROFILE likewise for the limits profile; null: none.
const LimitsProfile* requested_profile(const std::string& option) {
  if (option == "none") return nullptr;
  if (!option.empty()) return &limits_profile(option, "DeviceOptions::limits_profile");
  const std::optional<std::string> name = env::text("VKPACK_LIMITS_PROFILE");
  if (!name || *name == "none") return nullptr;
  return &limits_profile(*name, "VKPACK_LIMITS_PROFILE");
}

// The queues to create: the compute family's first queue, and the transfer queue where
// there is one (a second queue of the compute family, or a family of its own).
std::vector<VkDeviceQueueCreateInfo> queue_create_infos(std::uint32_t compute_family,
                                                        const std::optional<QueueSlot>& transfer,
                                                        const float* priorities) {
  std::vector<VkDeviceQueueCreateInfo> infos(1, {VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO});
  infos[0].queueFamilyIndex = compute_family;
  infos[0].queueCount = transfer && transfer->family == compute_family && transfer->index == 1 ? 2 : 1;
  infos[0].pQueuePriorities = priorities;
  if (transfer && transfer->family != compute_family) {
    infos.push_back({VK_STRUCTURE_TYPE_DEVICE_QUEUE_CREATE_INFO});
    infos[1].queueFamilyIndex = transfer->family;
    infos[1].queueCount = 1;
    infos[1].pQueuePriorities = priorities;
  }
  return infos;
}

// The features and extensions a device is created with, chained from `features`. Built
// in place (the chain points into it), then read for what was enabled.
struct FeatureRequest {
  VkPhysicalDeviceVulkan11Features v11{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  VkPhysicalDeviceVulkan12Features v12{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceCooperativeMatrixFeaturesNV matrix{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_COOPERATIVE_MATRIX_FEATURES_NV};
  VkPhysicalDevicePipelineExecutablePropertiesFeaturesKHR executables{
      VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PIPELINE_EXECUTABLE_PROPERTIES_FEATURES_KHR};
  VkPhysicalDeviceFeatures2 features{VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2};
  std::vector<const char*> extensions;

  FeatureRequest(const PhysicalDeviceInfo& info, const LimitsProfile* profile, const DeviceOptions& options,
                 bool kernel_statistics) {
    v12.timelineSemaphore = VK_TRUE;
    v12.shaderFloat16 = info.shader_float16 && (!profile || profile->shader_float16);
    v11.storageBuffer16BitAccess =
        info.storage_buffer_16bit && (!profile || profile->storage_buffer_16bit) && options.f16_storage;
    v12.pNext = &v11;
    features.pNext = &v12;
    if (info.portability_subset) extensions.push_back("VK_KHR_portability_subset");
    // The matrix units: their shaders use float16 storage and arithmetic and the Vulkan
    // memory model (glslang declares it for every cooperative-matrix module).
    if (options.cooperative_matrix && info.cooperative_matrix && f16_storage() && v12.shaderFloat16 &&
        info.vulkan_memory_model) {
      v12.vulkanMemoryModel = VK_TRUE;
      matrix.cooperativeMatrix = VK_TRUE;
      v11.pNext = &matrix;
      extensions.push_back(VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
    }
    // The driver's statistics of each kernel, for VKPACK_KERNEL_STATS=1 (Kernel logs them).
    if (kernel_statistics) {
      executables.pipelineExecutableInfo = VK_TRUE;
      executables.pNext = features.pNext;
      features.pNext = &executables;
      extensions.push_back(VK_KHR_PIPELINE_EXECUTABLE_PROPERTIES_EXTENSION_NAME);
    }
  }
  FeatureRequest(const FeatureRequest&) = delete;
  FeatureRequest& operator=(const FeatureRequest&) = delete;

  bool f16_storage() const { return v11.storageBuffer16BitAccess == VK_TRUE; }
  bool cooperative_matrix() const { return matrix.cooperativeMatrix == VK_TRUE; }
};

VkDevice create_device(const InstanceFns& ifn, const PhysicalDeviceInfo& info,
                       const std::vector<VkDeviceQueueCreateInfo>& queue_infos, const FeatureRequest& request) {
  VkDeviceCreateInfo create{VK_STRUCTURE_TYPE_DEVICE_CREATE_INFO};
  create.pNext = &request.features;
  create.queueCreateInfoCount = static_cast<std::uint32_t>(queue_infos.size());
  create.pQueueCreateInfos = queue_infos.data();
  create.enabledExtensionCount = static_cast<std::uint32_t>(request.extensions.size());
  create.ppEnabledExtensionNames = request.extensions.data();
  VkDevice device = VK_NULL_HANDLE;
  check(ifn.vkCreateDevice(info.handle, &create, nullptr, &device), "vkCreateDevice");
  return device;
}

// Vulkan 1.2 and its timeline semaphores, which vkpack needs: Error(unsupported) naming
// what the device lacks otherwise.
void require_vulkan_12(const PhysicalDeviceInfo& info, const std::string& label) {
  if (info.api_version < VK_API_VERSION_1_2)
    throw Error(ErrorCode::unsupported,
                label + " supports Vulkan " + api_version_string(info.api_version) + "; vkpack needs 1.2");
  if (!info.timeline_semaphore)
    throw Error(ErrorCode::unsupported,
                label + " lacks the timelineSemaphore feature (Vulkan 1.2), which vkpack needs");
}

// Whether device memory can be mapped as a whole: a host-visible, coherent, device-local
// type on a heap as large as the largest device-local one (a small mappable window, the
// 256 MiB BAR of a discrete GPU, does not count).
bool whole_device_memory_mappable(const VkPhysicalDeviceMemoryProperties& memory, const PhysicalDeviceInfo& info) {
  std::uint64_t largest_local_heap = 0;
  for (const MemoryHeapInfo& heap : info.heaps)
    if (heap.device_local) largest_local_heap = std::max(largest_local_heap, heap.bytes);
  const VkMemoryPropertyFlags want =
      VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT | VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  for (std::uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryType& type = memory.memoryTypes[i];
    if ((type.propertyFlags & want) == want && memory.memoryHeaps[type.heapIndex].size >= largest_local_heap)
      return true;
  }
  return false;
}

// The tuning mode: the option, else VKPACK_TUNE, else on for GPUs and off for CPUs.
TuneMode requested_tune_mode(TuneMode option, DeviceKind kind) {
  if (option == TuneMode::automatic)
    if (const auto asked = env::choice("VKPACK_TUNE")) option = parse_tune_mode(*asked, "VKPACK_TUNE");
  if (option == TuneMode::automatic) return kind == DeviceKind::gpu ? TuneMode::on : TuneMode::off;
  return option;
}

// What the device is before it is created: its kind and label, the limits under
// `profile` and DeviceOptions::custom_limits, the texel-buffer and statistics features
// asked for; the FeatureRequest settles float16 storage and cooperative matrices.
DeviceTraits describe_device(const PhysicalDeviceInfo& info, int index, const DeviceOptions& options,
                             const LimitsProfile* profile) {
  DeviceTraits t;
  t.info = &info;
  t.kind = info.type == VK_PHYSICAL_DEVICE_TYPE_CPU ? DeviceKind::cpu : DeviceKind::gpu;
  t.label = "device " + std::to_string(index) + " (" + info.name + ")";
  t.limits = info.limits;
  // VKPACK_TEXEL_BUFFERS=0 (docs/guide.md, Environment): storage buffers only, for a whole run.
  t.features.texel_buffers =
      options.texel_buffers && info.float_texels && env::flag("VKPACK_TEXEL_BUFFERS").value_or(true);
  t.features.half_texels = t.features.texel_buffers && info.half_texels;
  if (profile) {
    t.limits = clamp_limits(info.limits, profile->limits);
    t.profile = profile->name;
    t.features.coherent_readback = profile->coherent_readback;
  }
  if (options.custom_limits) {
    t.limits = clamp_limits(t.limits, *options.custom_limits);
    t.profile += t.profile.empty() ? "custom" : "+custom";
  }
  t.features.kernel_statistics = env::flag("VKPACK_KERNEL_STATS").value_or(false) && info.pipeline_statistics;
  return t;
}

}  // namespace

Device::Device(const Instance& instance, int index, DeviceOptions options) : staging_bytes_(options.staging_bytes) {
  const PhysicalDeviceInfo& info = instance.device(index);
  const LimitsProfile* profile = requested_profile(options.limits_profile);
  traits_ = describe_device(info, index, options, profile);
  const std::string& label = traits_.label;
  if (staging_bytes_ < 4096)
    throw Error(ErrorCode::invalid_argument,
                label + ": DeviceOptions::staging_bytes is " + std::to_string(staging_bytes_) + "; at least 4096");
  const MemoryMode mode = requested_memory_mode(options.memory);
  require_vulkan_12(info, label);
  const InstanceFns& ifn = instance.fns();
  const std::vector<VkQueueFamilyProperties> families = queue_families(ifn, info);
  const std::uint32_t compute_family = pick_compute_family(families, info);
  const std::optional<QueueSlot> transfer = pick_transfer_queue(families, compute_family, options.transfer_queue);

  const float priorities[2] = {1.0f, 1.0f};
  const std::vector<VkDeviceQueueCreateInfo> queue_infos = queue_create_infos(compute_family, transfer, priorities);
  DeviceFeatures& features = traits_.features;
  const FeatureRequest request(info, profile, options, features.kernel_statistics);
  features.f16_storage = request.f16_storage();
  features.cooperative_matrix = request.cooperative_matrix();
  const VkDevice device = create_device(ifn, info, queue_infos, request);
  // vkDestroyDevice comes from the instance table, so it is known before loading the rest.
  device_ =
      DeviceOwner(device, reinterpret_cast<PFN_vkDestroyDevice>(ifn.vkGetDeviceProcAddr(device, "vkDestroyDevice")));
  fn_ = load_device_fns(ifn, device, features.kernel_statistics);
  queues_ = std::make_unique<Queues>(fn_, device, QueueSlot{compute_family, 0}, transfer, label);

  VkPhysicalDeviceMemoryProperties memory_properties{};
  ifn.vkGetPhysicalDeviceMemoryProperties(info.handle, &memory_properties);
  const bool mappable = whole_device_memory_mappable(memory_properties, info);
  if (mode == MemoryMode::mapped && !mappable)
    throw Error(ErrorCode::unsupported, label +
                                            ": mapped memory was asked for, but the device has no host-visible "
                                            "device-local memory as large as its device-local heap; use staged");
  memory_ = std::make_unique<DeviceMemory>(memory_properties, mappable && mode != MemoryMode::staged);

  const std::string cache_dir = options.pipeline_cache_dir.value_or(default_cache_dir());
  kernels_ = std::make_unique<KernelCache>(
      fn_, device, traits_.limits, std::make_unique<PipelineCache>(fn_, device, info, cache_dir),
      open_tuning_cache(info, cache_dir, requested_tune_mode(options.tune, traits_.kind) == TuneMode::on));
}

Device::~Device() {
  if (device_.get() == VK_NULL_HANDLE) return;
  fn_.vkDeviceWaitIdle(device_.get());
  try {
    kernels_->pipelines().save();
  } catch (const Error& e) {
    log_warn("{}: pipeline cache not saved: {}", label(), e.what());
  }
}

bool Device::has_matrix_shape(std::uint32_t m, std::uint32_t n, std::uint32_t k) const {
  if (!features().cooperative_matrix) return false;
  return std::any_of(info().matrix_shapes.begin(), info().matrix_shapes.end(), [&](const MatrixShape& s) {
    return s.m == m && s.n == n && s.k == k && s.ab_type == "float16" && s.d_type == "float32";
  });
}

LockedStaging Device::lock_staging() {
  std::unique_lock lock(staging_mutex_);
  if (!staging_) staging_ = std::make_unique<StagingRing>(*this, staging_bytes_);
  return {std::move(lock), *staging_};
}

}  // namespace vkp::vk
