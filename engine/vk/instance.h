// Instance: the Vulkan instance, its validation layer, and the physical devices it sees.
#pragma once

#include <vulkan/vulkan_core.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "engine/vk/handle.h"
#include "engine/vk/loader.h"

namespace vkp::vk {

// Limits read once from the driver; kernels are sized and checked against these.
struct DeviceLimits {
  std::uint64_t max_storage_buffer_range = 0;     // bytes one storage binding may span
  std::uint64_t min_storage_buffer_offset_alignment = 0;
  std::uint64_t min_texel_buffer_offset_alignment = 0;
  std::uint32_t max_texel_buffer_elements = 0;    // texels one uniform texel buffer view may hold
  std::uint64_t max_memory_allocation_size = 0;   // bytes one vkAllocateMemory may ask for
  std::uint32_t max_workgroup_count[3] = {};
  std::uint32_t max_workgroup_size[3] = {};
  std::uint32_t max_workgroup_invocations = 0;
  std::uint32_t max_shared_memory_bytes = 0;
  std::uint32_t max_push_constants_bytes = 0;
  std::uint32_t max_storage_buffers_per_stage = 0;
  std::uint64_t non_coherent_atom_size = 0;       // bytes: flush/invalidate granularity
  std::uint32_t subgroup_size = 0;                // the default; min/max under subgroup size control
  std::uint32_t min_subgroup_size = 0, max_subgroup_size = 0;
  float timestamp_period_ns = 0;                  // ns per timestamp tick
  bool timestamps = false;                        // compute queue supports timestamps
};

struct MemoryHeapInfo {
  std::uint64_t bytes = 0;
  bool device_local = false;
};

// One product shape a device's matrix units take (VK_NV_cooperative_matrix, subgroup
// scope): D (m x n, of d_type) = A (m x k) B (k x n) + C, A and B of ab_type.
struct MatrixShape {
  std::uint32_t m = 0, n = 0, k = 0;
  std::string ab_type, d_type;  // "float16", "float32", "int8", ...
};

struct PhysicalDeviceInfo {
  int index = 0;                                  // position in Instance::devices()
  VkPhysicalDevice handle = VK_NULL_HANDLE;
  std::string name;
  VkPhysicalDeviceType type = VK_PHYSICAL_DEVICE_TYPE_OTHER;
  std::uint32_t vendor_id = 0;
  std::uint32_t device_id = 0;
  std::uint32_t api_version = 0;
  std::uint32_t driver_version = 0;
  std::string driver_name;                        // "llvmpipe", "NVIDIA", ...
  std::string driver_info;                        // "Mesa 22.3.6 (LLVM 15.0.6)", ...
  std::uint8_t pipeline_cache_uuid[VK_UUID_SIZE] = {};
  std::vector<MemoryHeapInfo> heaps;
  DeviceLimits limits;
  bool timeline_semaphore = false;                // features vkpack needs (Vulkan 1.2)
  bool shader_float16 = false;                    // optional features
  bool storage_buffer_16bit = false;
  bool float_texels = false;                      // UNIFORM_TEXEL_BUFFER of R32G32B32A32_SFLOAT, _UINT, _SINT
  bool half_texels = false;                       // and of R16G16B16A16_SFLOAT
  bool portability_subset = false;                // MoltenVK: must be enabled if present
  bool vulkan_memory_model = false;               // what cooperative-matrix shaders need besides
  bool cooperative_matrix = false;                // VK_NV_cooperative_matrix and its feature
  std::vector<MatrixShape> matrix_shapes;         // the shapes it offers (empty without it)
  bool pipeline_statistics = false;               // VK_KHR_pipeline_executable_properties and its feature
};

std::string_view to_string(VkPhysicalDeviceType type);
std::string_view vendor_name(std::uint32_t vendor_id);
std::string api_version_string(std::uint32_t version);
// Driver versions are encoded per vendor (NVIDIA and Intel on Windows differ).
std::string driver_version_string(const PhysicalDeviceInfo& info);

struct ValidationMessage {
  bool error = false;        // severity ERROR (otherwise WARNING)
  std::string text;
};

struct InstanceOptions {
  // Enable VK_LAYER_KHRONOS_validation and a debug messenger. Tests turn it on and treat
  // any message as a failure.
  bool validation = false;
  // With validation: also check synchronisation (missing barriers between kernels).
  bool synchronization_validation = true;
  // With validation: also the layer's best-practices checks (vendor-specific ones off).
  bool best_practices = false;
  // Receives every validation/loader message of severity warning or error; by default
  // they are logged as warnings. Called on the thread that made the Vulkan call.
  std::function<void(const ValidationMessage&)> on_message;
  // Loader library to open; empty means the platform's usual names.
  std::string loader_path;
};

class Instance {
 public:
  // Throws Error(no_device) when there is no loader or no device, naming what to install,
  // and Error(unsupported) when validation is asked for and the layer is not installed.
  explicit Instance(InstanceOptions options = {});
  ~Instance();
  Instance(const Instance&) = delete;
  Instance& operator=(const Instance&) = delete;

  const std::vector<PhysicalDeviceInfo>& devices() const { return devices_; }
  // devices()[index], or Error(invalid_argument) listing the devices there are.
  const PhysicalDeviceInfo& device(int index) const;

  VkInstance handle() const { return instance_.get(); }
  const InstanceFns& fns() const { return fns_; }
  bool validation() const { return options_.validation; }

  struct Messenger;  // the debug messenger and the callback it calls

 private:
  // In the order of teardown's reverse: the loader outlives the instance, the instance
  // its messenger, and the messenger's callback data (messenger_) the messenger handle.
  InstanceOptions options_;
  std::unique_ptr<Loader> loader_;
  std::unique_ptr<Messenger> messenger_;
  InstanceHandle instance_;
  InstanceFns fns_;
  DebugMessengerHandle debug_messenger_;
  std::vector<PhysicalDeviceInfo> devices_;
};

}  // namespace vkp::vk
