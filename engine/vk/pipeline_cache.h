// PipelineCache: a VkPipelineCache kept on disk between runs, so that kernels compiled
// once (slow on lavapipe: LLVM runs for each pipeline) load quickly the next time.
#pragma once

#include <string>

#include "engine/vk/handle.h"
#include "engine/vk/loader.h"

namespace vkp::vk {

struct PhysicalDeviceInfo;

// Where caches go by default: $VKPACK_CACHE_DIR, else $XDG_CACHE_HOME/vkpack, else
// $HOME/.cache/vkpack (the one place these variables are read); empty when none is set.
std::string default_cache_dir();

class PipelineCache {
 public:
  // Loads <dir>/<vendor>-<device>-<uuid>.pipelines when it exists and was written by
  // this driver (a mismatched or corrupt file is ignored: the driver rebuilds).
  // An empty dir keeps the cache in memory only.
  PipelineCache(const DeviceFns& fn, VkDevice device, const PhysicalDeviceInfo& info, std::string dir);

  VkPipelineCache get() const { return cache_.get(); }
  const std::string& path() const { return path_; }

  // Writes the cache to a temporary file and renames it over path(); throws Error(io).
  void save() const;

 private:
  const DeviceFns* fn_;
  VkDevice device_;
  std::string path_;
  PipelineCacheHandle cache_;
};

}  // namespace vkp::vk
