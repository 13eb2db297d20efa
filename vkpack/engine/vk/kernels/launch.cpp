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
  const std::uint32_t* most = device.limits().max_workgroup_count;
  const std::uint64_t x = std::min<std::uint64_t>(workgroups, most[0]);
  const std::uint64_t rows = x == 0 ? 0 : (workgroups + x - 1) / x;
  const std::uint64_t y = std::min<std::uint64_t>(rows, most[1]);
  const std::uint64_t z = y == 0 ? 0 : (rows + y - 1) / y;
  if (z > most[2])
    throw Error(ErrorCode::unsupported,
                fmt::format("{} workgroups exceed what {} can launch ({} x {} x {}, maxComputeWorkGroupCount)",
                            workgroups, device.label(), most[0], most[1], most[2]));
  return {static_cast<std::uint32_t>(x), static_cast<std::uint32_t>(y), static_cast<std::uint32_t>(z)};
}

void require_elements(const BufferSlice& slice, std::uint64_t elements, std::string_view kernel,
                      std::string_view operand) {
  if (slice.size / 4 < elements)
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} holds {} 32-bit elements, needs {}", kernel, operand,
                                                         slice.size / 4, elements));
}

}  // namespace vkp::vk
