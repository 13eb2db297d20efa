#include "engine/vk/pipeline_cache.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <vector>

#include "core/atomic_file.h"
#include "core/env.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/cache_files.h"
#include "engine/vk/instance.h"
#include "engine/vk/internal/check.h"

namespace vkp::vk {
namespace {

CacheOwner owner_of(const PhysicalDeviceInfo& info) {
  CacheOwner owner;
  owner.vendor_id = info.vendor_id;
  owner.device_id = info.device_id;
  std::memcpy(owner.uuid.data(), info.pipeline_cache_uuid, owner.uuid.size());
  return owner;
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
  std::vector<char> file;
  std::span<const std::byte> data;
  if (!dir.empty()) {
    std::string uuid;
    for (std::uint8_t b : info.pipeline_cache_uuid) uuid += fmt::format("{:02x}", b);
    path_ = fmt::format("{}/{:04x}-{:04x}-{}.pipelines", dir, info.vendor_id, info.device_id, uuid);
    std::error_code ec;
    const std::uintmax_t size = std::filesystem::file_size(path_, ec);
    if (!ec && size > kMaxPipelineCacheBytes) {
      log_warn("ignoring pipeline cache {}: {} bytes, more than the {} read", path_, size, kMaxPipelineCacheBytes);
    } else if (std::ifstream in(path_, std::ios::binary); in) {
      file.assign(std::istreambuf_iterator<char>(in), {});
      std::string why;
      if (const auto inside = pipeline_cache_data(std::as_bytes(std::span(file)), owner_of(info), why)) data = *inside;
      else if (!file.empty()) log_warn("ignoring pipeline cache {}: {}", path_, why);
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
  write_file_atomically(path_, pipeline_cache_file(std::as_bytes(std::span(data))));
}

}  // namespace vkp::vk
