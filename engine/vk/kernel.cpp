#include "engine/vk/kernel.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/error.h"
#include "core/log.h"
#include "engine/vk/instance.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {
namespace {

std::string kernel_name(const shaders::Spirv& spirv, const std::vector<SpecConstant>& spec) {
  if (spec.empty()) return std::string(spirv.name);
  std::vector<std::string> parts;
  for (const SpecConstant& s : spec) parts.push_back(fmt::format("{}={}", s.id, s.value));
  return fmt::format("{}{{{}}}", spirv.name, fmt::join(parts, ","));
}

std::string statistic_value(const VkPipelineExecutableStatisticKHR& s) {
  switch (s.format) {
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_BOOL32_KHR: return s.value.b32 ? "true" : "false";
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_INT64_KHR: return std::to_string(s.value.i64);
    case VK_PIPELINE_EXECUTABLE_STATISTIC_FORMAT_UINT64_KHR: return std::to_string(s.value.u64);
    default: return fmt::format("{:g}", s.value.f64);
  }
}

// Every statistic of every executable of `pipeline` (a compute pipeline has one; others'
// names are prefixed with the executable's).
std::vector<KernelStatistic> read_statistics(const DeviceFns& fn, VkDevice device, VkPipeline pipeline) {
  VkPipelineInfoKHR info{VK_STRUCTURE_TYPE_PIPELINE_INFO_KHR};
  info.pipeline = pipeline;
  std::uint32_t count = 0;
  check(fn.vkGetPipelineExecutablePropertiesKHR(device, &info, &count, nullptr),
        "vkGetPipelineExecutablePropertiesKHR");
  std::vector<VkPipelineExecutablePropertiesKHR> executables(count,
                                                             {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_PROPERTIES_KHR});
  check(fn.vkGetPipelineExecutablePropertiesKHR(device, &info, &count, executables.data()),
        "vkGetPipelineExecutablePropertiesKHR");
  std::vector<KernelStatistic> out;
  for (std::uint32_t e = 0; e < count; ++e) {
    VkPipelineExecutableInfoKHR which{VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_INFO_KHR};
    which.pipeline = pipeline;
    which.executableIndex = e;
    std::uint32_t n = 0;
    check(fn.vkGetPipelineExecutableStatisticsKHR(device, &which, &n, nullptr), "vkGetPipelineExecutableStatisticsKHR");
    std::vector<VkPipelineExecutableStatisticKHR> stats(n, {VK_STRUCTURE_TYPE_PIPELINE_EXECUTABLE_STATISTIC_KHR});
    check(fn.vkGetPipelineExecutableStatisticsKHR(device, &which, &n, stats.data()),
          "vkGetPipelineExecutableStatisticsKHR");
    const std::string prefix = count > 1 ? std::string(executables[e].name) + " " : "";
    for (const VkPipelineExecutableStatisticKHR& s : stats) out.push_back({prefix + s.name, statistic_value(s)});
  }
  return out;
}

// What a kernel asks of the device, against its limits: Error(unsupported) naming the
// limit it passes.
struct KernelNeeds {
  std::uint32_t invocations;
  const SpirvReflection& reflection;
  std::uint64_t shared_memory_bytes;
};
void check_limits(const std::string& name, const KernelNeeds& needs, const DeviceLimits& limits) {
  if (needs.invocations > limits.max_workgroup_invocations)
    throw Error(ErrorCode::unsupported, "kernel " + name + ": " + std::to_string(needs.invocations) +
                                            " invocations per workgroup exceed the device's " +
                                            std::to_string(limits.max_workgroup_invocations) +
                                            " (maxComputeWorkGroupInvocations)");
  if (needs.reflection.push_constant_bytes > limits.max_push_constants_bytes)
    throw Error(ErrorCode::unsupported, "kernel " + name + ": " + std::to_string(needs.reflection.push_constant_bytes) +
                                            " bytes of push constants exceed the device's " +
                                            std::to_string(limits.max_push_constants_bytes) +
                                            " (maxPushConstantsSize)");
  if (needs.shared_memory_bytes > limits.max_shared_memory_bytes)
    throw Error(ErrorCode::unsupported, "kernel " + name + ": " + std::to_string(needs.shared_memory_bytes) +
                                            " bytes of shared memory exceed the device's " +
                                            std::to_string(limits.max_shared_memory_bytes) +
                                            " (maxComputeSharedMemorySize)");
  const auto storage_buffers =
      static_cast<std::size_t>(std::count_if(needs.reflection.bindings.begin(), needs.reflection.bindings.end(),
                                             [](const SpirvBinding& b) { return !b.texel; }));
  if (storage_buffers > limits.max_storage_buffers_per_stage)
    throw Error(ErrorCode::unsupported, "kernel " + name + " binds " + std::to_string(storage_buffers) +
                                            " storage buffers; the device allows " +
                                            std::to_string(limits.max_storage_buffers_per_stage) +
                                            " (maxPerStageDescriptorStorageBuffers)");
}

DescriptorSetLayoutHandle make_set_layout(const DeviceFns& fn, VkDevice device, const SpirvReflection& reflection) {
  std::vector<VkDescriptorSetLayoutBinding> bindings;
  for (const SpirvBinding& b : reflection.bindings)
    bindings.push_back({b.binding,
                        b.texel ? VK_DESCRIPTOR_TYPE_UNIFORM_TEXEL_BUFFER : VK_DESCRIPTOR_TYPE_STORAGE_BUFFER, 1,
                        VK_SHADER_STAGE_COMPUTE_BIT, nullptr});
  VkDescriptorSetLayoutCreateInfo set_info{VK_STRUCTURE_TYPE_DESCRIPTOR_SET_LAYOUT_CREATE_INFO};
  set_info.bindingCount = static_cast<std::uint32_t>(bindings.size());
  set_info.pBindings = bindings.data();
  VkDescriptorSetLayout set_layout = VK_NULL_HANDLE;
  check(fn.vkCreateDescriptorSetLayout(device, &set_info, nullptr, &set_layout), "vkCreateDescriptorSetLayout");
  return {device, set_layout, fn.vkDestroyDescriptorSetLayout};
}

PipelineLayoutHandle make_pipeline_layout(const DeviceFns& fn, VkDevice device, VkDescriptorSetLayout set_layout,
                                          std::uint32_t push_constant_bytes) {
  VkPushConstantRange push{VK_SHADER_STAGE_COMPUTE_BIT, 0, push_constant_bytes};
  VkPipelineLayoutCreateInfo layout_info{VK_STRUCTURE_TYPE_PIPELINE_LAYOUT_CREATE_INFO};
  layout_info.setLayoutCount = 1;
  layout_info.pSetLayouts = &set_layout;
  layout_info.pushConstantRangeCount = push_constant_bytes > 0 ? 1 : 0;
  layout_info.pPushConstantRanges = &push;
  VkPipelineLayout layout = VK_NULL_HANDLE;
  check(fn.vkCreatePipelineLayout(device, &layout_info, nullptr, &layout), "vkCreatePipelineLayout");
  return {device, layout, fn.vkDestroyPipelineLayout};
}

// The specialization constants as Vulkan takes them, one 4-byte word each; info() is
// null when there are none. Holds what info() points into.
class Specialization {
 public:
  explicit Specialization(const std::vector<SpecConstant>& spec) {
    for (const SpecConstant& s : spec) {
      entries_.push_back({s.id, static_cast<std::uint32_t>(values_.size() * 4), 4});
      values_.push_back(s.value);
    }
    info_ = {static_cast<std::uint32_t>(entries_.size()), entries_.data(), values_.size() * 4, values_.data()};
  }
  Specialization(const Specialization&) = delete;
  Specialization& operator=(const Specialization&) = delete;
  const VkSpecializationInfo* info() const { return entries_.empty() ? nullptr : &info_; }

 private:
  std::vector<VkSpecializationMapEntry> entries_;
  std::vector<std::uint32_t> values_;
  VkSpecializationInfo info_{};
};

}  // namespace

Kernel::Kernel(const DeviceFns& fn, VkDevice device, VkPipelineCache cache, const DeviceLimits& limits,
               const shaders::Spirv& spirv, std::vector<SpecConstant> spec)
    : name_(kernel_name(spirv, spec)), reflection_(reflect_spirv(spirv.words, spirv.name)) {
  std::sort(spec.begin(), spec.end(), [](auto& a, auto& b) { return a.id < b.id; });
  for (const SpecConstant& s : spec)
    if (s.id == kF16BindingsId) f16_bindings_ = s.value;
  std::uint32_t invocations = 1;
  for (int i = 0; i < 3; ++i) {
    const SpirvLocalSize& dim = reflection_.local_size[i];
    local_size_[i] = dim.value;
    for (const SpecConstant& s : spec)
      if (dim.spec_id >= 0 && s.id == static_cast<std::uint32_t>(dim.spec_id)) local_size_[i] = s.value;
    if (local_size_[i] == 0 || local_size_[i] > limits.max_workgroup_size[i])
      throw Error(ErrorCode::unsupported, "kernel " + name_ + ": workgroup size " + std::to_string(local_size_[i]) +
                                              " in dimension " + std::to_string(i) + " exceeds the device's " +
                                              std::to_string(limits.max_workgroup_size[i]) +
                                              " (maxComputeWorkGroupSize)");
    invocations *= local_size_[i];
  }
  std::map<std::uint32_t, std::uint32_t> spec_values;
  for (const SpecConstant& s : spec) spec_values[s.id] = s.value;
  shared_memory_bytes_ = spirv_shared_memory_bytes(spirv.words, spirv.name, spec_values);
  check_limits(name_, {invocations, reflection_, shared_memory_bytes_}, limits);

  set_layout_ = make_set_layout(fn, device, reflection_);
  layout_ = make_pipeline_layout(fn, device, set_layout_.get(), reflection_.push_constant_bytes);

  VkShaderModuleCreateInfo module_info{VK_STRUCTURE_TYPE_SHADER_MODULE_CREATE_INFO};
  module_info.codeSize = spirv.words.size_bytes();
  module_info.pCode = spirv.words.data();
  VkShaderModule module = VK_NULL_HANDLE;
  check(fn.vkCreateShaderModule(device, &module_info, nullptr, &module), "vkCreateShaderModule");
  ShaderModuleHandle module_owner(device, module, fn.vkDestroyShaderModule);

  const Specialization specialization(spec);
  VkComputePipelineCreateInfo info{VK_STRUCTURE_TYPE_COMPUTE_PIPELINE_CREATE_INFO};
  info.stage = {VK_STRUCTURE_TYPE_PIPELINE_SHADER_STAGE_CREATE_INFO};
  info.stage.stage = VK_SHADER_STAGE_COMPUTE_BIT;
  info.stage.module = module;
  info.stage.pName = "main";
  info.stage.pSpecializationInfo = specialization.info();
  info.layout = layout_.get();
  // Lets Recording::dispatch split a grid beyond maxComputeWorkGroupCount.
  info.flags = VK_PIPELINE_CREATE_DISPATCH_BASE_BIT;
  // Statistics are asked for at creation, from a compile of this process: a pipeline the
  // cache holds might come without them.
  const bool statistics = fn.vkGetPipelineExecutableStatisticsKHR != nullptr;
  if (statistics) {
    info.flags |= VK_PIPELINE_CREATE_CAPTURE_STATISTICS_BIT_KHR;
    cache = VK_NULL_HANDLE;
  }
  VkPipeline pipeline = VK_NULL_HANDLE;
  check(fn.vkCreateComputePipelines(device, cache, 1, &info, nullptr, &pipeline), "vkCreateComputePipelines");
  pipeline_ = {device, pipeline, fn.vkDestroyPipeline};
  if (statistics) {
    statistics_ = read_statistics(fn, device, pipeline);
    std::vector<std::string> parts;
    for (const KernelStatistic& s : statistics_) parts.push_back(s.name + " " + s.value);
    log_info("kernel {}: {}", name_, fmt::join(parts, ", "));
  }
}

}  // namespace vkp::vk
