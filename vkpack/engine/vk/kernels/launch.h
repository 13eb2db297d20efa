// What every kernel launcher shares: the choice between the CPU and GPU variant of a
// kernel family, and the grid for a one-dimensional launch.
#pragma once

#include <cstdint>
#include <string_view>

#include "vkpack/engine/vk/device.h"
#include "vkpack/engine/vk/memory.h"
#include "vkpack/engine/vk/recording.h"

namespace vkp::vk {

// Which variant of a kernel family to record. `automatic` follows Device::kind();
// tests force each variant so both are checked on any device.
enum class KernelChoice { automatic, cpu, gpu };

DeviceKind resolve(KernelChoice choice, const Device& device);

// Workgroups for `workgroups` one-dimensional groups: x up to the device's limit, then
// y, the rest in z (shaders use linear_group() from common.glsl).
Groups grid_1d(std::uint64_t workgroups, const Device& device);

// Throws Error(invalid_argument) when `slice` holds fewer than `elements` 32-bit values,
// naming the kernel and operand: "gemm: B holds 100 floats, needs 120".
void require_elements(const BufferSlice& slice, std::uint64_t elements, std::string_view kernel,
                      std::string_view operand);

}  // namespace vkp::vk
