// What every kernel launcher shares: the choice between the CPU and GPU variant of a
// kernel family, and the grid for a one-dimensional launch.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

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

// Throws Error(invalid_argument) when `slice` holds fewer than `elements` values (32-bit,
// or 16-bit for a float16 slice), naming the kernel and operand:
// "gemm: B holds 100 32-bit elements, needs 120".
void require_elements(const BufferSlice& slice, std::uint64_t elements, std::string_view kernel,
                      std::string_view operand);

// Float16 storage. A kernel family that accepts float16 bindings has a second SPIR-V
// build (shaders/CMakeLists.txt, F16) whose specialization constant kF16Bindings has bit
// b set where binding b holds float16 values.
inline constexpr std::uint32_t kF16BindingsId = 40;
// Bit b set where bindings[b].f16.
std::uint32_t f16_bindings(std::span<const BufferSlice> bindings);
// The build to use: `plain` when no binding is float16; otherwise `f16`, after checking
// that the device has the storageBuffer16BitAccess feature (Error(unsupported) naming the
// kernel and the device) and, when the family accepts float16 only on some bindings
// (`allowed`, a mask), that no other binding is (Error(invalid_argument) naming it).
const shaders::Spirv& storage_build(const Device& device, const shaders::Spirv& plain, const shaders::Spirv& f16,
                                    std::uint32_t bindings_mask, std::uint32_t allowed = ~0u);
// Appends {kF16BindingsId, mask} when mask is not zero.
void add_f16_constant(std::vector<SpecConstant>& specialization, std::uint32_t mask);
// The kernel of a family with a float16 build for these bindings: storage_build() and
// add_f16_constant() in one.
const Kernel& storage_kernel(Device& device, const shaders::Spirv& plain, const shaders::Spirv& f16,
                             std::span<const BufferSlice> bindings, std::vector<SpecConstant> specialization,
                             std::uint32_t allowed = ~0u);
// Error(invalid_argument) when any of `slices` is float16: for kernels without a float16
// build. Names the kernel.
void require_f32(std::span<const BufferSlice> slices, std::string_view kernel);

}  // namespace vkp::vk
