// Device: one VkDevice on a physical device, with its queues (queues.h), the features
// enabled on it, its memory types and the kernels built so far (KernelCache).
//
// Several Devices may be opened on the same physical device; each has its own VkDevice
// and queue. That is how multi-tower code is tested on one GPU or on lavapipe.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "engine/vk/device_memory.h"
#include "engine/vk/handle.h"
#include "engine/vk/instance.h"
#include "engine/vk/kernel.h"
#include "engine/vk/kernel_cache.h"
#include "engine/vk/loader.h"
#include "engine/vk/queues.h"

namespace vkp::vk {

class StagingRing;

// A Device's staging buffers, used only while `lock` is held (Device::lock_staging).
struct LockedStaging {
  std::unique_lock<std::mutex> lock;
  StagingRing& ring;
};

// Owns the VkDevice; declared first in Device so that it is destroyed last.
using DeviceOwner = DeviceRootHandle;

// A second queue for uploads that overlap computation (StagingInput's next batch).
enum class TransferQueue {
  automatic,  // a transfer-only queue family where the device has one (discrete GPUs)
  stand_in,   // the compute family stands in (a second queue of it, or the compute
              // queue itself), so that the path runs where there is none (lavapipe)
  none,       // uploads are recorded into the step's own command buffer
};

struct DeviceOptions {
  // Directory of the on-disk pipeline cache; nullopt: default_cache_dir(); "": none.
  std::optional<std::string> pipeline_cache_dir;
  MemoryMode memory = MemoryMode::automatic;
  // A name of limits_profiles() ("nvidia", "arm-mali", "smallest", ...): vkpack then
  // believes no limit above that GPU's. Empty: VKPACK_LIMITS_PROFILE if set, else the
  // driver's own limits; "none": the driver's own, whatever the environment says.
  std::string limits_profile;
  // Limits tighter still (a GPU that is not among the profiles, or a test that wants a
  // limit small enough to reach with little data); applied after the profile. Start
  // from the driver's (PhysicalDeviceInfo::limits) and lower what you want.
  std::optional<DeviceLimits> custom_limits;
  TransferQueue transfer_queue = TransferQueue::automatic;
  // Enable storageBuffer16BitAccess where the device (and the limits profile) has it;
  // false behaves as a device without it: float16 storage takes the kernels' packed
  // builds (two halves a 32-bit word), as on SwiftShader or an older mobile driver.
  bool f16_storage = true;
  // Let kernels read an operand through a uniform texel buffer where they have a build
  // for it (shaders/texel_input.glsl, vk::texel_readable); false, or the environment's
  // VKPACK_TEXEL_BUFFERS=0, binds storage buffers only.
  bool texel_buffers = true;
  // Enable VK_NV_cooperative_matrix where the device offers it with float16 storage and
  // arithmetic (PhysicalDeviceInfo::cooperative_matrix): gemm may then run on the
  // matrix units (GemmVariant::cooperative_matrix).
  bool cooperative_matrix = true;
  // Whether kernels with variants (gemm's tilings) measure them on first use and keep the
  // fastest, in a file beside the pipeline cache (TuningCache).
  TuneMode tune = TuneMode::automatic;
  // Capacity of each of the two staging buffers (upload, readback) of TransferBatch.
  std::uint64_t staging_bytes = std::uint64_t{16} << 20;
};

// Which family of kernels suits the device. CPU devices (lavapipe, SwiftShader) run a
// workgroup as one thread with SIMD lanes, so shared memory and barriers are costly and
// register blocking wins; GPUs want shared-memory tiles.
enum class DeviceKind { cpu, gpu };

// What a Device has enabled, from its options, the driver and the environment.
struct DeviceFeatures {
  // Whether kernels may bind float16 buffers (storageBuffer16BitAccess is enabled).
  bool f16_storage = false;
  // DeviceOptions::texel_buffers, where the device reads R32G32B32A32_SFLOAT texel
  // buffers; half_texels: float16 slices too, as R16G16B16A16_SFLOAT.
  bool texel_buffers = true;
  bool half_texels = false;
  // Whether VK_NV_cooperative_matrix is enabled (DeviceOptions::cooperative_matrix), with
  // storageBuffer16BitAccess, shaderFloat16 and vulkanMemoryModel: float16 products on
  // the matrix units, in the shapes PhysicalDeviceInfo::matrix_shapes lists.
  bool cooperative_matrix = false;
  // Whether each kernel carries the driver's statistics (Kernel::statistics): asked for
  // with VKPACK_KERNEL_STATS=1 and offered by the driver
  // (VK_KHR_pipeline_executable_properties).
  bool kernel_statistics = false;
  // Whether readback memory is written by the device and read by the host without
  // invalidation (false under a limits profile whose GPU caches it non-coherently).
  bool coherent_readback = true;
};

// What a Device is, settled when it is opened: the physical device, its kind and label,
// the limits vkpack believes and the features it enabled.
struct DeviceTraits {
  const PhysicalDeviceInfo* info = nullptr;
  DeviceKind kind = DeviceKind::gpu;
  std::string label;    // "device 0 (llvmpipe (LLVM 15.0.6, 256 bits))", for messages
  DeviceLimits limits;  // the driver's, tightened by the limits profile if one is active
  std::string profile;  // the active limits profile's name, or empty
  DeviceFeatures features;
};

class Device {
 public:
  Device(const Instance& instance, int index, DeviceOptions options = {});
  ~Device();  // waits for the queue, saves the pipeline cache (a failure is logged)
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const PhysicalDeviceInfo& info() const { return *traits_.info; }
  // The driver's limits, tightened by the limits profile if one is active.
  const DeviceLimits& limits() const { return traits_.limits; }
  // The active profile's name, or empty.
  const std::string& limits_profile() const { return traits_.profile; }
  DeviceKind kind() const { return traits_.kind; }
  // What is enabled on this device (DeviceFeatures).
  const DeviceFeatures& features() const { return traits_.features; }
  // Whether cooperative_matrix is enabled and info().matrix_shapes has the subgroup-scope
  // float16 x float16 -> float32 shape m x n x k.
  bool has_matrix_shape(std::uint32_t m, std::uint32_t n, std::uint32_t k) const;
  // "device 0 (llvmpipe (LLVM 15.0.6, 256 bits))", for messages.
  const std::string& label() const { return traits_.label; }

  VkDevice handle() const { return device_.get(); }
  const DeviceFns& fn() const { return fn_; }

  // The kernel for `spirv` with `specialization`, built on first use and kept.
  const Kernel& kernel(const shaders::Spirv& spirv, std::vector<SpecConstant> specialization = {}) {
    return kernels_->get(spirv, std::move(specialization));
  }
  // The kernels built so far, the pipeline cache and the measured kernel choices.
  KernelCache& kernels() const { return *kernels_; }

  // The compute queue and the transfer queue, with their timelines: submissions and waits.
  Queues& queues() { return *queues_; }
  const Queues& queues() const { return *queues_; }

  // Memory types, mapped or staged, the bytes held (DeviceMemory).
  DeviceMemory& memory() { return *memory_; }
  const DeviceMemory& memory() const { return *memory_; }
  // The persistent staging buffers of TransferBatch (made on first use), with their lock.
  LockedStaging lock_staging();

 private:
  DeviceTraits traits_;
  DeviceFns fn_;
  DeviceOwner device_;

  // Everything below is destroyed before device_; the arenas of staging_ count their
  // memory in memory_.
  std::unique_ptr<DeviceMemory> memory_;
  std::unique_ptr<Queues> queues_;
  std::unique_ptr<KernelCache> kernels_;
  std::uint64_t staging_bytes_;
  std::mutex staging_mutex_;
  std::unique_ptr<StagingRing> staging_;  // last: its arenas count their memory in memory_
};

}  // namespace vkp::vk
