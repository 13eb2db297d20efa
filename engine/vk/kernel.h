// Kernel: a compute pipeline built from an embedded SPIR-V module and its
// specialization constants, with the layouts its bindings and push constants need.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "engine/vk/handle.h"
#include "engine/vk/loader.h"
#include "engine/vk/spirv_reflect.h"
#include "shaders/spirv.h"

namespace vkp::vk {

struct DeviceLimits;

// The specialization constant of shaders/f16_storage.glsl: bit b set where binding b
// holds float16 values.
inline constexpr std::uint32_t kF16BindingsId = 40;

// One specialization constant (32 bits: uint, int, float bits or bool).
struct SpecConstant {
  std::uint32_t id = 0;
  std::uint32_t value = 0;
  bool operator==(const SpecConstant&) const = default;
};

// One statistic the driver reports of a kernel's pipeline, where DeviceFeatures::kernel_statistics:
// {"Register Count", "136"}. Names and meanings are the driver's own.
struct KernelStatistic {
  std::string name;
  std::string value;
};

class Kernel {
 public:
  // Builds the pipeline through `cache`. Throws Error(unsupported) when the workgroup or
  // push constants exceed the device's limits, naming the kernel.
  Kernel(const DeviceFns& fn, VkDevice device, VkPipelineCache cache, const DeviceLimits& limits,
         const shaders::Spirv& spirv, std::vector<SpecConstant> specialization);

  // "gemm_rb{0=16,1=4}"
  const std::string& name() const { return name_; }
  const std::vector<SpirvBinding>& bindings() const { return reflection_.bindings; }
  std::uint32_t push_constant_bytes() const { return reflection_.push_constant_bytes; }
  const std::vector<std::uint32_t>& push_constant_offsets() const { return reflection_.push_constant_offsets; }
  // Workgroup size after specialization.
  const std::array<std::uint32_t, 3>& local_size() const { return local_size_; }
  bool uses_num_workgroups() const { return reflection_.uses_num_workgroups; }
  std::uint64_t shared_memory_bytes() const { return shared_memory_bytes_; }
  // Bit b set where binding b reads or writes float16 values (the specialization
  // constant kF16BindingsId); 0 for every other kernel.
  std::uint32_t f16_bindings() const { return f16_bindings_; }
  // The driver's statistics of the pipeline (VKPACK_KERNEL_STATS=1, where the driver
  // offers them; logged at info as the kernel is built); empty otherwise.
  const std::vector<KernelStatistic>& statistics() const { return statistics_; }

  VkPipeline pipeline() const { return pipeline_.get(); }
  VkPipelineLayout layout() const { return layout_.get(); }
  VkDescriptorSetLayout set_layout() const { return set_layout_.get(); }

 private:
  std::string name_;
  SpirvReflection reflection_;
  std::array<std::uint32_t, 3> local_size_{};
  std::uint64_t shared_memory_bytes_ = 0;
  std::uint32_t f16_bindings_ = 0;
  std::vector<KernelStatistic> statistics_;
  DescriptorSetLayoutHandle set_layout_;
  PipelineLayoutHandle layout_;
  PipelineHandle pipeline_;
};

}  // namespace vkp::vk
