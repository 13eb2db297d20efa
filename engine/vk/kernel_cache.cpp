#include "engine/vk/kernel_cache.h"

#include <algorithm>

namespace vkp::vk {

KernelCache::KernelCache(const DeviceFns& fn, VkDevice device, const DeviceLimits& limits,
                         std::unique_ptr<PipelineCache> pipelines, std::shared_ptr<TuningCache> tuning)
    : fn_(&fn), device_(device), limits_(&limits), pipelines_(std::move(pipelines)), tuning_(std::move(tuning)) {}

const Kernel& KernelCache::get(const shaders::Spirv& spirv, std::vector<SpecConstant> specialization) {
  std::sort(specialization.begin(), specialization.end(), [](auto& a, auto& b) { return a.id < b.id; });
  std::string key(spirv.name);
  for (const SpecConstant& s : specialization) key += "," + std::to_string(s.id) + "=" + std::to_string(s.value);
  std::lock_guard lock(mutex_);
  auto& slot = kernels_[key];
  if (!slot) {
    try {
      slot = std::make_unique<Kernel>(*fn_, device_, pipelines_->get(), *limits_, spirv, std::move(specialization));
    } catch (...) {
      kernels_.erase(key);
      throw;
    }
  }
  return *slot;
}

std::size_t KernelCache::size() const {
  std::lock_guard lock(mutex_);
  return kernels_.size();
}

}  // namespace vkp::vk
