#include "engine/vk/kernels/launch.h"

#include <algorithm>
#include <bit>
#include <chrono>

#include <fmt/format.h>

#include "core/error.h"

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
  const std::uint64_t width = slice.f16 ? 2 : 4;
  if (slice.size / width < elements)
    throw Error(ErrorCode::invalid_argument, fmt::format("{}: {} holds {} {}-bit elements, needs {}", kernel, operand,
                                                         slice.size / width, 8 * width, elements));
}

std::uint32_t f16_mask(std::span<const BufferSlice> bindings) {
  std::uint32_t mask = 0;
  for (std::size_t b = 0; b < bindings.size() && b < 32; ++b)
    if (bindings[b].f16) mask |= 1u << b;
  return mask;
}

namespace {

// The float16 build a device runs: `f16` where it has storageBuffer16BitAccess, its
// packed sibling where it does not.
const shaders::Spirv& f16_build(const Device& device, const shaders::Spirv& f16) {
  return device.features().f16_storage || f16.packed == nullptr ? f16 : *f16.packed;
}

void check_f16(const Device& device, const shaders::Spirv& plain, const shaders::Spirv& f16,
               std::uint32_t storage_f16, std::uint32_t all_f16, std::uint32_t allowed) {
  if (storage_f16 != 0 && !device.features().f16_storage && f16.packed == nullptr)
    throw Error(ErrorCode::unsupported,
                fmt::format("{}: a binding holds float16 values, but {} lacks the storageBuffer16BitAccess feature "
                            "and this kernel has no packed float16 build (compile without f16 storage / mixed "
                            "precision on this device)",
                            plain.name, device.label()));
  if ((all_f16 & ~allowed) != 0)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("{}: binding {} holds float16 values, which this kernel reads only as float32", plain.name,
                            std::countr_zero(all_f16 & ~allowed)));
}

// Whether a texel build may run: a CPU device (measured there: on lavapipe a per-lane
// storage-buffer load is a loop over the lanes; a GPU's coalesced loads are not) and
// every binding in `texel_inputs` texel_readable.
bool texel_build_fits(const Device& device, std::uint32_t texel_inputs, std::span<const BufferSlice> bindings) {
  if (device.kind() != DeviceKind::cpu) return false;
  for (std::size_t b = 0; b < bindings.size() && b < 32; ++b)
    if ((texel_inputs >> b & 1u) != 0 && !texel_readable(bindings[b], device)) return false;
  return true;
}

}  // namespace

const Kernel& storage_kernel(Device& device, const shaders::Spirv& plain, const shaders::Spirv& f16,
                             std::span<const BufferSlice> bindings, std::vector<SpecConstant> specialization,
                             std::uint32_t allowed) {
  const std::uint32_t mask = f16_mask(bindings);
  check_f16(device, plain, f16, mask, mask, allowed);
  if (mask == 0) return device.kernel(plain, std::move(specialization));
  specialization.push_back({kF16BindingsId, mask});
  return device.kernel(f16_build(device, f16), std::move(specialization));
}

const Kernel& storage_kernel(Device& device, const TexelFamily& family, std::uint32_t texel_inputs,
                             std::span<const BufferSlice> bindings, std::vector<SpecConstant> specialization,
                             std::uint32_t allowed) {
  const shaders::Spirv &plain = family.plain, &texel = family.texel, &f16 = family.f16, &texel_f16 = family.texel_f16;
  const std::uint32_t all = f16_mask(bindings), storage = all & ~texel_inputs;
  // The texel float16 build stores float16_t; without 16-bit storage the packed plain
  // build takes every float16 binding.
  const bool use_texel =
      texel_build_fits(device, texel_inputs, bindings) && (storage == 0 || device.features().f16_storage);
  if (!use_texel) return storage_kernel(device, plain, f16, bindings, std::move(specialization), allowed);
  check_f16(device, plain, f16, storage, all, allowed);
  if (storage == 0) return device.kernel(texel, std::move(specialization));
  specialization.push_back({kF16BindingsId, storage});
  return device.kernel(texel_f16, std::move(specialization));
}

const Kernel& texel_kernel(Device& device, const shaders::Spirv& plain, const shaders::Spirv& texel,
                           std::uint32_t texel_inputs, std::span<const BufferSlice> bindings,
                           std::vector<SpecConstant> specialization) {
  // No float16 build: a float16 binding goes to `plain`, which refuses it by name.
  const bool any_f16 = f16_mask(bindings) != 0;
  return device.kernel(!any_f16 && texel_build_fits(device, texel_inputs, bindings) ? texel : plain,
                       std::move(specialization));
}

std::vector<double> interleaved_replay_ns(std::span<const std::unique_ptr<Recording>> recordings, int rounds) {
  std::vector<double> best(recordings.size(), 0.0);
  for (int round = 0; round < rounds; ++round)
    for (std::size_t i = 0; i < recordings.size(); ++i) {
      Recording& recording = *recordings[i];
      const auto start = std::chrono::steady_clock::now();
      recording.run();
      const double wall = std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count();
      const double ns = recording.device().limits().timestamps ? recording.times().total_ns() : wall;
      best[i] = round == 0 ? ns : std::min(best[i], ns);
    }
  return best;
}

}  // namespace vkp::vk
