#include "engine/vk/tuning.h"

#include <filesystem>
#include <fstream>
#include <iterator>

#include <fmt/format.h>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "engine/vk/cache_files.h"
#include "engine/vk/instance.h"

namespace vkp::vk {

TuneMode parse_tune_mode(std::string_view text, std::string_view what) {
  if (text == "on" || text == "1") return TuneMode::on;
  if (text == "off" || text == "0") return TuneMode::off;
  if (text == "auto" || text.empty()) return TuneMode::automatic;
  throw Error(ErrorCode::invalid_argument,
              fmt::format("{}: '{}' is not a tuning mode (on, off or auto)", what, text));
}

TuningCache::TuningCache(const PhysicalDeviceInfo& info, std::string dir, bool enabled)
    : enabled_(enabled), driver_(fmt::format("{} {} {}", info.driver_name, driver_version_string(info), info.driver_info)) {
  if (!enabled_ || dir.empty()) return;
  std::string uuid;
  for (std::uint8_t b : info.pipeline_cache_uuid) uuid += fmt::format("{:02x}", b);
  path_ = fmt::format("{}/{:04x}-{:04x}-{}.tuning.json", dir, info.vendor_id, info.device_id, uuid);
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path_, ec);
  if (ec) return;  // none yet
  std::string text;
  if (size <= kMaxTuningFileBytes) {
    std::ifstream in(path_, std::ios::binary);
    text.assign(std::istreambuf_iterator<char>(in), {});
  } else {
    text.resize(kMaxTuningFileBytes + 1);  // refused below, unread
  }
  std::string why;
  if (auto choices = tuning_choices(text, driver_, why)) choices_ = std::move(*choices);
  else log_warn("ignoring tuning choices {}: {}", path_, why);
}

std::optional<std::string> TuningCache::get(const std::string& key) const {
  const std::lock_guard lock(mutex_);
  const auto it = choices_.find(key);
  if (it == choices_.end()) return std::nullopt;
  return it->second;
}

std::size_t TuningCache::size() const {
  const std::lock_guard lock(mutex_);
  return choices_.size();
}

void TuningCache::put(const std::string& key, const std::string& choice) {
  const std::lock_guard lock(mutex_);
  choices_[key] = choice;
  ++measured_;
  try {
    save();
  } catch (const Error& e) {
    log_warn("tuning choices not saved: {}", e.what());
  }
}

std::shared_ptr<TuningCache> open_tuning_cache(const PhysicalDeviceInfo& info, const std::string& dir, bool enabled) {
  if (!enabled) return std::make_shared<TuningCache>(info, dir, false);
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<TuningCache>> open;
  std::string uuid;
  for (std::uint8_t b : info.pipeline_cache_uuid) uuid += fmt::format("{:02x}", b);
  const std::string key = fmt::format("{}|{:04x}-{:04x}-{}|{}", dir, info.vendor_id, info.device_id, uuid,
                                      driver_version_string(info));
  const std::lock_guard lock(mutex);
  std::shared_ptr<TuningCache> cache = open[key].lock();
  if (!cache) {
    cache = std::make_shared<TuningCache>(info, dir, true);
    open[key] = cache;
  }
  return cache;
}

void TuningCache::save() const {
  if (path_.empty()) return;
  std::error_code ec;
  std::filesystem::create_directories(std::filesystem::path(path_).parent_path(), ec);
  write_file_atomically(path_, tuning_file(driver_, choices_));
}

}  // namespace vkp::vk
