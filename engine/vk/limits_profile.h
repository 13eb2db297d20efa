// Limits profiles: what real GPUs allow, so that a device (lavapipe in CI) can be made
// to believe it is one and every decision vkpack takes from limits (arena blocks and
// offsets, workgroup grids, kernel and binding checks, readback coherence) follows.
//
// A profile never raises a limit: the active limits are the tighter of the driver's and
// the profile's (DeviceOptions::limits_profile, VKPACK_LIMITS_PROFILE).
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "engine/vk/instance.h"

namespace vkp::vk {

struct LimitsProfile {
  std::string name;    // "nvidia-ampere", what DeviceOptions::limits_profile names
  std::string device;  // the device the numbers describe
  std::string source;  // the public report they were read from
  DeviceLimits limits;
  // Readback memory is host-cached but not host-coherent: the host must invalidate
  // (in whole atoms of non_coherent_atom_size) before it reads what the device wrote.
  bool coherent_readback = true;
  bool shader_float16 = true;
  bool storage_buffer_16bit = true;
};

// The profiles of real GPUs, then "smallest": the tightest value of each limit over them.
std::span<const LimitsProfile> limits_profiles();
// By name; Error(invalid_argument) naming `what` and listing the names otherwise.
const LimitsProfile& limits_profile(std::string_view name, std::string_view what = "limits profile");

// The tighter of each limit (alignments and atoms: the larger).
DeviceLimits clamp_limits(const DeviceLimits& driver, const DeviceLimits& profile);

}  // namespace vkp::vk
