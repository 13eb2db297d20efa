// KernelCache: the kernels of one Device, built on first use and kept, through a
// pipeline cache kept on disk (pipeline_cache.h), with the kernel choices measured on
// the device beside it (tuning.h). Safe to use from several threads.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "engine/vk/kernel.h"
#include "engine/vk/pipeline_cache.h"
#include "engine/vk/tuning.h"

namespace vkp::vk {

class KernelCache {
 public:
  // `limits` (the Device's) outlive the cache.
  KernelCache(const DeviceFns& fn, VkDevice device, const DeviceLimits& limits,
              std::unique_ptr<PipelineCache> pipelines, std::shared_ptr<TuningCache> tuning);

  // The kernel for `spirv` with `specialization`, built on first use and kept.
  const Kernel& get(const shaders::Spirv& spirv, std::vector<SpecConstant> specialization = {});
  // Kernels built so far.
  std::size_t size() const;
  const PipelineCache& pipelines() const { return *pipelines_; }
  // Measured kernel choices (DeviceOptions::tune); disabled() when tuning is off. Shared
  // by the Devices of one physical device.
  TuningCache& tuning() const { return *tuning_; }

 private:
  const DeviceFns* fn_;
  VkDevice device_;
  const DeviceLimits* limits_;
  std::unique_ptr<PipelineCache> pipelines_;
  std::shared_ptr<TuningCache> tuning_;
  mutable std::mutex mutex_;
  std::map<std::string, std::unique_ptr<Kernel>> kernels_;
};

}  // namespace vkp::vk
