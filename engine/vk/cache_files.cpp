#include "engine/vk/cache_files.h"

#include <cstring>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/crc32c.h"
#include "core/json_depth.h"
#include "core/little_endian.h"

namespace vkp::vk {
namespace {

constexpr std::string_view kMagic = "VKPKPIPE";
constexpr std::uint32_t kFormat = 1;
constexpr std::size_t kPrefix = 8 + 4 + 4 + 8;
constexpr std::uint32_t kHeaderVersionOne = 1;  // VK_PIPELINE_CACHE_HEADER_VERSION_ONE
constexpr std::size_t kDriverHeader = 16 + 16;  // VkPipelineCacheHeaderVersionOne

}  // namespace

std::string pipeline_cache_file(std::span<const std::byte> driver_data) {
  std::string out(kMagic);
  append_le<std::uint32_t>(out, kFormat);
  append_le<std::uint32_t>(out, crc32c(driver_data));
  append_le<std::uint64_t>(out, driver_data.size());
  out.append(reinterpret_cast<const char*>(driver_data.data()), driver_data.size());
  return out;
}

std::optional<std::span<const std::byte>> pipeline_cache_data(std::span<const std::byte> file,
                                                              const CacheOwner& owner, std::string& why) {
  if (file.size() < kPrefix || std::memcmp(file.data(), kMagic.data(), kMagic.size()) != 0) {
    why = "not a vkpack pipeline cache (written by an earlier vkpack, or damaged)";
    return std::nullopt;
  }
  if (const auto format = load_le<std::uint32_t>(file.data() + 8); format != kFormat) {
    why = fmt::format("format {}, this vkpack reads {}", format, kFormat);
    return std::nullopt;
  }
  const auto crc = load_le<std::uint32_t>(file.data() + 12);
  const auto length = load_le<std::uint64_t>(file.data() + 16);
  const std::span<const std::byte> data = file.subspan(kPrefix);
  if (length != data.size()) {
    why = fmt::format("it holds {} bytes of driver data, its header says {} (cut short or damaged)", data.size(), length);
    return std::nullopt;
  }
  if (const std::uint32_t actual = crc32c(data); actual != crc) {
    why = fmt::format("its data have CRC-32C {:08x}, its header says {:08x} (damaged)", actual, crc);
    return std::nullopt;
  }
  if (data.size() < kDriverHeader) {
    why = fmt::format("{} bytes of driver data, less than the driver's {}-byte header", data.size(), kDriverHeader);
    return std::nullopt;
  }
  const auto header_length = load_le<std::uint32_t>(data.data());
  const auto version = load_le<std::uint32_t>(data.data() + 4);
  const auto vendor = load_le<std::uint32_t>(data.data() + 8);
  const auto device = load_le<std::uint32_t>(data.data() + 12);
  if (header_length < kDriverHeader || header_length > data.size() || version != kHeaderVersionOne) {
    why = fmt::format("the driver's header is not VkPipelineCacheHeaderVersionOne (length {}, version {})",
                      header_length, version);
    return std::nullopt;
  }
  if (vendor != owner.vendor_id || device != owner.device_id ||
      std::memcmp(data.data() + 16, owner.uuid.data(), owner.uuid.size()) != 0) {
    why = fmt::format("written by another driver or device ({:04x}-{:04x}, this is {:04x}-{:04x})", vendor, device,
                      owner.vendor_id, owner.device_id);
    return std::nullopt;
  }
  return data;
}

std::string tuning_file(const std::string& driver, const std::map<std::string, std::string>& choices) {
  nlohmann::json j;
  j["driver"] = driver;
  j["choices"] = choices;
  return j.dump(1) + "\n";
}

std::optional<std::map<std::string, std::string>> tuning_choices(std::string_view text, std::string_view driver,
                                                                 std::string& why) {
  if (text.size() > kMaxTuningFileBytes) {
    why = fmt::format("{} bytes, more than the {} a tuning file may hold", text.size(), kMaxTuningFileBytes);
    return std::nullopt;
  }
  if (const std::size_t depth = json_nesting_depth(text); depth > kMaxJsonDepth) {
    why = fmt::format("it nests {} levels deep, more than the {} read", depth, kMaxJsonDepth);
    return std::nullopt;
  }
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object() || !j.contains("driver") || !j["driver"].is_string() ||
      !j.contains("choices") || !j["choices"].is_object()) {
    why = "not a tuning file: a JSON object with a \"driver\" string and a \"choices\" object";
    return std::nullopt;
  }
  if (const auto& recorded = j["driver"].get_ref<const std::string&>(); recorded != driver) {
    why = fmt::format("measured with driver '{}', this is '{}'", recorded.substr(0, kMaxTuningTextBytes), driver);
    return std::nullopt;
  }
  std::map<std::string, std::string> choices;
  for (const auto& [key, value] : j["choices"].items()) {
    if (!value.is_string() || key.size() > kMaxTuningTextBytes ||
        value.get_ref<const std::string&>().size() > kMaxTuningTextBytes) {
      why = fmt::format("the choice under '{}' is not a variant's name", key.substr(0, 100));
      return std::nullopt;
    }
    choices[key] = value.get<std::string>();
  }
  return choices;
}

}  // namespace vkp::vk
