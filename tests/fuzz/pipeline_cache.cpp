// Fuzz target: the pipeline cache file (<device>.pipelines) before the driver sees it.
// First byte even: the rest is the whole file. Odd: the rest is the driver's data,
// wrapped as vkpack writes it, so the checks past the checksum are reached too; data
// naming the device must come back whole.
#include "fuzz_target.h"

#include <cstdlib>
#include <cstring>

#include "engine/vk/cache_files.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  vkp::vk::CacheOwner owner;
  owner.vendor_id = 0x10005;  // Mesa's
  owner.device_id = 0;
  for (std::size_t i = 0; i < owner.uuid.size(); ++i) owner.uuid[i] = static_cast<std::uint8_t>(i);
  const auto rest = vkp::fuzz::bytes_of(data + 1, size - 1);
  std::string why;
  if (data[0] % 2 == 0) {
    const auto inside = vkp::vk::pipeline_cache_data(rest, owner, why);
    if (inside && (inside->data() < rest.data() || inside->data() + inside->size() != rest.data() + rest.size()))
      std::abort();  // the data must lie inside the file, up to its end
    if (!inside && why.empty()) std::abort();
    return 0;
  }
  const std::string file = vkp::vk::pipeline_cache_file(rest);
  const auto inside = vkp::vk::pipeline_cache_data(std::as_bytes(std::span(file.data(), file.size())), owner, why);
  if (inside && (inside->size() != rest.size() || std::memcmp(inside->data(), rest.data(), rest.size()) != 0))
    std::abort();
  return 0;
}
