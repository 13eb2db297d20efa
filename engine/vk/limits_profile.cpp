#include "engine/vk/limits_profile.h"

#include <algorithm>
#include <vector>

#include "core/error.h"

namespace vkp::vk {
namespace {

struct Numbers {
  std::uint32_t count_x, count_yz;       // maxComputeWorkGroupCount (y and z equal on all six)
  std::uint32_t invocations;             // maxComputeWorkGroupInvocations
  std::uint32_t size_xy, size_z;         // maxComputeWorkGroupSize
  std::uint32_t shared;                  // maxComputeSharedMemorySize
  std::uint64_t storage_range;           // maxStorageBufferRange
  std::uint64_t storage_alignment;       // minStorageBufferOffsetAlignment
  std::uint64_t atom;                    // nonCoherentAtomSize
  std::uint32_t storage_buffers;         // maxPerStageDescriptorStorageBuffers
  std::uint32_t push;                    // maxPushConstantsSize
  std::uint64_t allocation;              // maxMemoryAllocationSize
  std::uint32_t subgroup, min_subgroup, max_subgroup;
};

DeviceLimits limits_of(const Numbers& n) {
  DeviceLimits l;
  l.max_workgroup_count[0] = n.count_x;
  l.max_workgroup_count[1] = l.max_workgroup_count[2] = n.count_yz;
  l.max_workgroup_invocations = n.invocations;
  l.max_workgroup_size[0] = l.max_workgroup_size[1] = n.size_xy;
  l.max_workgroup_size[2] = n.size_z;
  l.max_shared_memory_bytes = n.shared;
  l.max_storage_buffer_range = n.storage_range;
  l.min_storage_buffer_offset_alignment = n.storage_alignment;
  l.non_coherent_atom_size = n.atom;
  l.max_storage_buffers_per_stage = n.storage_buffers;
  l.max_push_constants_bytes = n.push;
  l.max_memory_allocation_size = n.allocation;
  l.subgroup_size = n.subgroup;
  l.min_subgroup_size = n.min_subgroup;
  l.max_subgroup_size = n.max_subgroup;
  return l;
}

LimitsProfile profile(std::string name, std::string device, std::string source, const Numbers& n,
                      bool coherent_readback = true) {
  LimitsProfile p;
  p.name = std::move(name);
  p.device = std::move(device);
  p.source = std::move(source);
  p.limits = limits_of(n);
  p.coherent_readback = coherent_readback;
  return p;
}

// The reports the numbers come from. "gpuinfo export" names a file of the
// KhronosGroup/Vulkan-Profiles repository, where vulkan.gpuinfo.org reports are kept as
// profile JSON (profiles/LunarG/...); those hold no memory types, so the coherence of
// readback memory is each vendor's usual memory-type layout.
std::vector<LimitsProfile> make_profiles() {
  std::vector<LimitsProfile> all;
  all.push_back(profile(
      "nvidia", "NVIDIA GeForce RTX 5080, driver 610.62 (Turing to Blackwell report the same compute limits)",
      "gpuinfo export VP_LUNARG_desktop_baseline_2026/vp_gpuinfo_nvidia_geforce_rtx_5080_610_62_0_0_windows_11.json; "
      "maxMemoryAllocationSize as older drivers report it (0xFFE00000)",
      {2147483647, 65535, 1024, 1024, 64, 49152, 4294967295u, 16, 64, 1048576, 256, 0xFFE00000u, 32, 32, 32}));
  all.push_back(profile(
      "amd-rdna", "AMD Radeon RX 6600 (RADV NAVI23), Mesa 23.3",
      "gpuinfo export VP_LUNARG_desktop_max_2024/"
      "vp_gpuinfo_amd_radeon_rx_6600__radv_navi23__23_2_99_endeavouros_unknown.json",
      {65535, 65535, 1024, 1024, 1024, 65536, 4294967295u, 4, 64, 8388606, 256, 0xFFFFFFFCu, 64, 32, 64}));
  all.push_back(profile(
      "intel-xe", "Intel Iris Xe Graphics (TGL GT2), Mesa 26.1 ANV",
      "gpuinfo export VP_LUNARG_desktop_baseline_2026/"
      "vp_gpuinfo_intel_r__iris_r__xe_graphics__tgl_gt2__26_1_3_void_unknown.json (min subgroup 8: ANV's usual)",
      {2147483647, 65535, 1024, 1024, 1024, 49152, 4294967295u, 4, 64, 201326592, 256, 12409119744ull, 32, 8, 32}));
  all.push_back(profile(
      "apple-moltenvk", "Apple M1 through MoltenVK 1.4.1",
      "gpuinfo export VP_LUNARG_desktop_baseline_2026/vp_gpuinfo_apple_m1_0_2_2209_macos_26_5_1.json; "
      "also gfx-rs/wgpu issue 5551 (vulkaninfo on MoltenVK)",
      {1073741824, 1073741824, 1024, 1024, 1024, 32768, 4294967295u, 16, 16, 31, 4096, 4294967296ull, 32, 4, 32}));
  // No complete Mali-G78 report is public in a form we could read: these are the
  // smallest values seen across Mali reports (shared memory, push constants, storage
  // buffers per stage and range are minimums over gpuinfo's Mali-G78 driver reports
  // 1.1.177 to 1.4.303; 512 invocations as Valhall drivers of the G78's time report;
  // subgroup 16 from Mali-G720 logs in ggml-org/llama.cpp PR 27163 and issue 17783).
  // Mali drivers give readback a HOST_CACHED memory type without HOST_COHERENT.
  all.push_back(profile(
      "arm-mali", "ARM Mali-G78 class (Valhall), proprietary driver: the tightest values of public reports",
      "minimums over vulkan.gpuinfo.org Mali-G78 reports; subgroup from ggml-org/llama.cpp #27163, #17783",
      {65535, 65535, 512, 512, 512, 32768, 268435456, 16, 64, 35, 128, 2147483648ull, 16, 16, 16}, false));
  // Qualcomm's own driver: maxStorageBufferRange 1 << 27 as Mesa Turnip's tu_device.h
  // says it matches ("the latest Qualcomm driver, also a hw limit"); the rest from
  // Turnip's limits table (src/freedreno/vulkan/tu_device.cc), with Z = 64, offset
  // alignment 64, 128 bytes of push constants and 24 storage buffers per stage taken at
  // the tight end of what Qualcomm drivers are reported to give; subgroup 64 (default)
  // to 128 from llama.cpp issue 8743 (Adreno 750) and vk-gltf-viewer PR 63.
  all.push_back(profile(
      "qualcomm-adreno", "Qualcomm Adreno 660/730 class, proprietary driver",
      "Mesa Turnip src/freedreno/vulkan/tu_device.cc and tu_device.h; ggml-org/llama.cpp issue 8743",
      {65535, 65535, 1024, 1024, 64, 32768, 134217728, 64, 64, 24, 128, 2147483648ull, 64, 64, 128}, false));
  // The tightest of each: what CI's staged leg runs under.
  LimitsProfile smallest = all.front();
  smallest.name = "smallest";
  smallest.device = "no device: the tightest value of every limit over the profiles above";
  smallest.source = "derived";
  for (const LimitsProfile& p : all) {
    smallest.limits = clamp_limits(smallest.limits, p.limits);
    smallest.coherent_readback = smallest.coherent_readback && p.coherent_readback;
    smallest.limits.min_subgroup_size = std::min(smallest.limits.min_subgroup_size, p.limits.min_subgroup_size);
    smallest.limits.max_subgroup_size = std::max(smallest.limits.max_subgroup_size, p.limits.max_subgroup_size);
  }
  all.push_back(smallest);
  return all;
}

}  // namespace

std::span<const LimitsProfile> limits_profiles() {
  static const std::vector<LimitsProfile> all = make_profiles();
  return all;
}

const LimitsProfile& limits_profile(std::string_view name, std::string_view what) {
  std::string known;
  for (const LimitsProfile& p : limits_profiles()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error(ErrorCode::invalid_argument,
              std::string(what) + " '" + std::string(name) + "' is not a known profile (known: " + known + ")");
}

DeviceLimits clamp_limits(const DeviceLimits& driver, const DeviceLimits& profile) {
  DeviceLimits l = driver;
  auto tighter = [](auto& value, auto other) { value = std::min(value, other); };
  tighter(l.max_storage_buffer_range, profile.max_storage_buffer_range);
  tighter(l.max_memory_allocation_size, profile.max_memory_allocation_size);
  for (int i = 0; i < 3; ++i) {
    tighter(l.max_workgroup_count[i], profile.max_workgroup_count[i]);
    tighter(l.max_workgroup_size[i], profile.max_workgroup_size[i]);
  }
  tighter(l.max_workgroup_invocations, profile.max_workgroup_invocations);
  tighter(l.max_shared_memory_bytes, profile.max_shared_memory_bytes);
  tighter(l.max_push_constants_bytes, profile.max_push_constants_bytes);
  tighter(l.max_storage_buffers_per_stage, profile.max_storage_buffers_per_stage);
  l.min_storage_buffer_offset_alignment =
      std::max(l.min_storage_buffer_offset_alignment, profile.min_storage_buffer_offset_alignment);
  l.non_coherent_atom_size = std::max(l.non_coherent_atom_size, profile.non_coherent_atom_size);
  // Subgroup sizes are what the hardware runs: a profile cannot change them
  // (LP_NATIVE_VECTOR_WIDTH does on lavapipe).
  return l;
}

}  // namespace vkp::vk
