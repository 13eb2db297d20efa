#include "callbacks/monitors/crc32c.h"

#include <span>

#include "core/crc32c.h"

namespace vkp::callbacks {

std::uint32_t masked_crc32c(std::string_view data) {
  const std::uint32_t crc = crc32c(std::as_bytes(std::span<const char>(data.data(), data.size())));
  return ((crc >> 15) | (crc << 17)) + 0xa282ead8u;
}

}  // namespace vkp::callbacks
