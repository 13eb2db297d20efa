// What every kernel launcher shares: the choice between the CPU and GPU variant of a
// kernel family, and the grid for a one-dimensional launch.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "engine/vk/device.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"

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

// Bit b set where bindings[b] holds float16 values: the value of kF16BindingsId for them.
std::uint32_t f16_mask(std::span<const BufferSlice> bindings);

// The kernel of a family with a float16 build (its source enables 16-bit storage under
// VKP_F16, cmake/VkpackShaders.cmake) for these bindings: `plain` when none holds
// float16 values (BufferSlice::f16); otherwise `f16`, specialized with kF16BindingsId =
// the mask of float16 bindings, or, on a device without the storageBuffer16BitAccess
// feature, `f16.packed` (two halves a word), after checking that one of the two can run
// (Error(unsupported) naming the kernel and the device) and that only bindings in
// `allowed` are float16 (Error(invalid_argument) naming the binding).
const Kernel& storage_kernel(Device& device, const shaders::Spirv& plain, const shaders::Spirv& f16,
                             std::span<const BufferSlice> bindings, std::vector<SpecConstant> specialization,
                             std::uint32_t allowed = ~0u);

// The four builds of a family with float16 and texel builds (F16 and TEXEL in
// shaders/CMakeLists.txt): `texel` reads some bindings through texel buffers,
// `texel_f16` is that build with float16 storage buffers as well.
struct TexelFamily {
  const shaders::Spirv& plain;
  const shaders::Spirv& texel;
  const shaders::Spirv& f16;
  const shaders::Spirv& texel_f16;
};
// The same for such a family, its texel builds reading the bindings in the mask
// `texel_inputs`. On a CPU device where each of those bindings is texel_readable,
// float16 ones included (they are read through R16G16B16A16_SFLOAT views, which need no
// 16-bit feature), the texel build is chosen by the float16 bindings among the others,
// as above; elsewhere (and where another binding holds float16 values on a device
// without 16-bit storage) `plain` or `f16`.
const Kernel& storage_kernel(Device& device, const TexelFamily& family, std::uint32_t texel_inputs,
                             std::span<const BufferSlice> bindings, std::vector<SpecConstant> specialization,
                             std::uint32_t allowed = ~0u);

// A family with a texel build and no float16 one (TEXEL but not F16 in
// shaders/CMakeLists.txt): `texel` on a CPU device where each binding in `texel_inputs`
// is texel_readable and holds float32 values, else `plain`.
const Kernel& texel_kernel(Device& device, const shaders::Spirv& plain, const shaders::Spirv& texel,
                           std::uint32_t texel_inputs, std::span<const BufferSlice> bindings,
                           std::vector<SpecConstant> specialization);

// Nanoseconds of one replay of each finished recording (the candidates of a measured
// choice, vk::TuningCache), the best of `rounds` replays taken in turn (a, b, c, a, b,
// c, ...), so that a GPU's clock, which follows its load, weighs on every candidate
// alike: an H100 (2026-11-28) idles at 345 MHz and took over a second of light load to
// return to 1980, so candidates timed one after another while it rose favoured the
// last. Device time where the queue has timestamps, else the host's clock around the
// submission and wait.
std::vector<double> interleaved_replay_ns(std::span<const std::unique_ptr<Recording>> recordings, int rounds = 3);

}  // namespace vkp::vk
