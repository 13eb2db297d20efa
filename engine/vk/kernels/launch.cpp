#include "vkpack/engine/vk/kernels/launch.h"

#include <algorithm>

#include <fmt/format.h>

#include "vkpack/core/error.h"

namespace vkp::vk {

DeviceKind resolve(KernelChoice choice, const Device& device) {
  switch (choice) {
    case KernelChoice::cpu: return DeviceKind::cpu;
    case KernelChoice::gpu: return DeviceKind::gpu;
    case KernelChoice::automatic: break;
  }
  return device.kind();
}

Groups grid_1d(std::uint64_t workgroups, const Device& device) {
  const std::uint64_t max_x = device.limits().max_workgroup_count[0];
  const std::uint64_t x = std::min(workgroups, max_x);
  const std::uint64_t y = x == 0 ? 0 : (workgroups + x - 1) / x;
  if (y > device.limits().max_workgroup_count[1])
    throw Error(ErrorCode::unsupported, fmt::format("{} workgroups exceed what {} can launch", workgroups, device.label()));
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), 1};
}

void require_elements(const BufferSlice& slice, std::uint64_t elements, std::string_view kernel,
                      std::string_view operand) {
  if (slice.size / 4 < elements)
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} holds {} 32-bit elements, needs {}", kernel, operand,
                                                         slice.size / 4, elements));
}

}  // namespace vkp::vk
