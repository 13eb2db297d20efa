#include "engine/vk/pipeline_cache.h"

#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/check.h"
#include "engine/vk/instance.h"

namespace vkp::vk {
namespace {

// VkPipelineCacheHeaderVersionOne: length, version, vendor, device, uuid (32 bytes).
bool header_matches(const std::vector<char>& data, const PhysicalDeviceInfo& info) {
  if (data.size() < 32) return false;
  std::uint32_t words[4];
  std::memcpy(words, data.data(), sizeof words);
  return words[0] >= 32 && words[1] == VK_PIPELINE_CACHE_HEADER_VERSION_ONE && words[2] == info.vendor_id &&
         words[3] == info.device_id && std::memcmp(data.data() + 16, info.pipeline_cache_uuid, VK_UUID_SIZE) == 0;
}

}  // namespace

std::string default_cache_dir() {
  if (const std::optional<std::string> dir = env::text("VKPACK_CACHE_DIR")) return *dir;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) return std::string(xdg) + "/vkpack";
  if (const char* home = std::getenv("HOME"); home && *home) return std::string(home) + "/.cache/vkpack";
  return {};
}

PipelineCache::PipelineCache(const DeviceFns& fn, VkDevice device, const PhysicalDeviceInfo& info, std::string dir)
    : fn_(&fn), device_(device) {
  std::vector<char> data;
  if (!dir.empty()) {
    std::string uuid;
    for (std::uint8_t b : info.pipeline_cache_uuid) uuid += fmt::format("{:02x}", b);
    path_ = fmt::format("{}/{:04x}-{:04x}-{}.pipelines", dir, info.vendor_id, info.device_id, uuid);
    std::ifstream in(path_, std::ios::binary);
    if (in) data.assign(std::istreambuf_iterator<char>(in), {});
    if (!data.empty() && !header_matches(data, info)) {
      log_warn("ignoring pipeline cache {}: written by another driver or damaged", path_);
      data.clear();
    }
  }
  VkPipelineCacheCreateInfo create{VK_STRUCTURE_TYPE_PIPELINE_CACHE_CREATE_INFO};
  create.initialDataSize = data.size();
  create.pInitialData = data.empty() ? nullptr : data.data();
  VkPipelineCache cache = VK_NULL_HANDLE;
  check(fn.vkCreatePipelineCache(device, &create, nullptr, &cache), "vkCreatePipelineCache");
  cache_ = {device, cache, fn.vkDestroyPipelineCache};
}

void PipelineCache::save() const {
  if (path_.empty()) return;
  std::size_t size = 0;
  check(fn_->vkGetPipelineCacheData(device_, cache_.get(), &size, nullptr), "vkGetPipelineCacheData");
  std::vector<char> data(size);
  check(fn_->vkGetPipelineCacheData(device_, cache_.get(), &size, data.data()), "vkGetPipelineCacheData");
  data.resize(size);
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  write_file_atomically(path_, std::string_view(data.data(), data.size()));
}

}  // namespace vkp::vk
