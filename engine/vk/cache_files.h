// The two files vkpack keeps per device in its cache directory, as bytes: the pipeline
// cache (the driver's own data, wrapped by vkpack with its length and CRC-32C) and the
// tuning choices (JSON). Reading checks everything before anything is used, so a damaged
// or foreign file is ignored with a reason, never handed to the driver or believed.
// Core only (no device), so the fuzz targets of tests/fuzz compile it alone.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vkp::vk {

// Which device a pipeline cache belongs to: the fields of VkPipelineCacheHeaderVersionOne
// that the driver writes at the start of its data.
struct CacheOwner {
  std::uint32_t vendor_id = 0, device_id = 0;
  std::array<std::uint8_t, 16> uuid{};  // VkPhysicalDeviceProperties::pipelineCacheUUID
};

// The file for the driver's data: "VKPKPIPE", format 1, the data's CRC-32C and length
// (little-endian 32, 32 and 64 bits), then the data.
std::string pipeline_cache_file(std::span<const std::byte> driver_data);

// A pipeline cache file larger than this is not read (lavapipe's for every kernel of the
// examples is about 30 MB).
inline constexpr std::size_t kMaxPipelineCacheBytes = std::size_t{1} << 30;

// The driver's data inside `file` when the file is whole and the data's own header names
// `owner`; otherwise nullopt, with `why` saying what is wrong (for the warning).
std::optional<std::span<const std::byte>> pipeline_cache_data(std::span<const std::byte> file,
                                                              const CacheOwner& owner, std::string& why);

// The tuning file's text: {"driver": ..., "choices": {key: variant name, ...}}.
std::string tuning_file(const std::string& driver, const std::map<std::string, std::string>& choices);

// The choices in `text` when it is such a file written for `driver`; otherwise nullopt,
// with `why` saying what is wrong. Keys and names are bounded (kMaxTuningTextBytes each).
std::optional<std::map<std::string, std::string>> tuning_choices(std::string_view text, std::string_view driver,
                                                                 std::string& why);

// A tuning key or variant name longer than this is refused; a whole file over
// kMaxTuningFileBytes is not parsed.
inline constexpr std::size_t kMaxTuningTextBytes = 1024;
inline constexpr std::size_t kMaxTuningFileBytes = std::size_t{16} << 20;

}  // namespace vkp::vk
