// The pipeline cache and tuning files as bytes: what vkpack writes reads back, and every
// damaged or foreign file is refused with a reason before the driver or the tuner sees it.
#include "engine/vk/cache_files.h"

#include <gtest/gtest.h>

#include <cstring>
#include <string>
#include <vector>

namespace vkp::vk {
namespace {

CacheOwner owner() {
  CacheOwner o;
  o.vendor_id = 0x10de;
  o.device_id = 0x2330;
  for (std::size_t i = 0; i < o.uuid.size(); ++i) o.uuid[i] = static_cast<std::uint8_t>(0xa0 + i);
  return o;
}

// Driver data as a driver writes it: VkPipelineCacheHeaderVersionOne, then `payload`.
std::vector<std::byte> driver_data(const CacheOwner& o, const std::string& payload) {
  std::vector<std::byte> data(32 + payload.size());
  const std::uint32_t words[4] = {32, 1, o.vendor_id, o.device_id};
  std::memcpy(data.data(), words, sizeof words);  // little-endian, as the tests' hosts
  std::memcpy(data.data() + 16, o.uuid.data(), 16);
  std::memcpy(data.data() + 32, payload.data(), payload.size());
  return data;
}

std::span<const std::byte> bytes(const std::string& s) { return std::as_bytes(std::span(s.data(), s.size())); }

TEST(PipelineCacheFile, WhatIsWrittenReadsBackAsTheDriversData) {
  const std::vector<std::byte> data = driver_data(owner(), "compiled pipelines");
  const std::string file = pipeline_cache_file(data);
  EXPECT_EQ(file.size(), 24 + data.size());
  std::string why;
  const auto inside = pipeline_cache_data(bytes(file), owner(), why);
  ASSERT_TRUE(inside.has_value()) << why;
  ASSERT_EQ(inside->size(), data.size());
  EXPECT_EQ(std::memcmp(inside->data(), data.data(), data.size()), 0);
}

TEST(PipelineCacheFile, EveryChangedByteAndEveryCutIsRefusedWithAReason) {
  const std::string file = pipeline_cache_file(driver_data(owner(), "compiled pipelines"));
  for (std::size_t i = 0; i < file.size(); ++i) {
    std::string changed = file;
    changed[i] ^= 0x01;
    std::string why;
    EXPECT_FALSE(pipeline_cache_data(bytes(changed), owner(), why).has_value()) << "byte " << i;
    EXPECT_FALSE(why.empty()) << "byte " << i;
  }
  for (std::size_t n = 0; n < file.size(); ++n) {
    std::string why;
    EXPECT_FALSE(pipeline_cache_data(bytes(file.substr(0, n)), owner(), why).has_value()) << n << " bytes";
  }
}

TEST(PipelineCacheFile, AnotherDevicesCacheIsRefusedNamingBoth) {
  CacheOwner other = owner();
  other.device_id = 0x2331;
  std::string why;
  EXPECT_FALSE(pipeline_cache_data(bytes(pipeline_cache_file(driver_data(other, "x"))), owner(), why).has_value());
  EXPECT_EQ(why, "written by another driver or device (10de-2331, this is 10de-2330)");
  other = owner();
  other.uuid[15] ^= 1;  // another driver build
  EXPECT_FALSE(pipeline_cache_data(bytes(pipeline_cache_file(driver_data(other, "x"))), owner(), why).has_value());
}

TEST(TuningFile, ChoicesReadBackForTheirDriverOnly) {
  const std::map<std::string, std::string> choices{{"gemm m64 n64 k64", "tiled_64"}, {"gemm m4096", "coopmat"}};
  const std::string text = tuning_file("NVIDIA 580.159.4", choices);
  std::string why;
  const auto back = tuning_choices(text, "NVIDIA 580.159.4", why);
  ASSERT_TRUE(back.has_value()) << why;
  EXPECT_EQ(*back, choices);
  EXPECT_FALSE(tuning_choices(text, "NVIDIA 590.1", why).has_value());
  EXPECT_EQ(why, "measured with driver 'NVIDIA 580.159.4', this is 'NVIDIA 590.1'");
}

TEST(TuningFile, AnythingElseIsRefusedWithAReason) {
  for (const std::string& text :
       {std::string(""), std::string("[]"), std::string(R"({"driver": 3, "choices": {}})"),
        std::string(R"({"driver": "d", "choices": []})"), std::string(R"({"driver": "d", "choices": {"k": 1}})"),
        std::string(R"({"driver": "d", "choices": {"k": ["tiled"]}})"),
        R"({"driver": "d", "choices": {")" + std::string(2000, 'k') + R"(": "tiled"}})",
        R"({"driver": "d", "choices": {"k": )" + std::string(100000, '[') + std::string(100000, ']') + "}}"}) {
    std::string why;
    EXPECT_FALSE(tuning_choices(text, "d", why).has_value()) << text.substr(0, 80);
    EXPECT_FALSE(why.empty()) << text.substr(0, 80);
  }
}

}  // namespace
}  // namespace vkp::vk
