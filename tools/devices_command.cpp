#include <cstdio>
#include <memory>

#include <fmt/format.h>

#include "commands.h"
#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/instance.h"
#include "engine/vk/limits_profile.h"

namespace vkp::tool {
namespace {

std::string mib(std::uint64_t bytes) { return fmt::format("{:.0f} MiB", static_cast<double>(bytes) / (1 << 20)); }

std::string json_string(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) < 0x20) {
      out += fmt::format("\\u{:04x}", static_cast<int>(c));
      continue;
    }
    out += c;
  }
  return out + "\"";
}

// What a Device opened with the command's options believes: its memory mode, profile and
// limits (tightened by the profile), or why it cannot be opened.
struct Opened {
  std::unique_ptr<vk::Device> device;
  std::string error;
};

Opened open(const vk::Instance& instance, int index, const vk::DeviceOptions& options) {
  Opened o;
  try {
    o.device = std::make_unique<vk::Device>(instance, index, options);
  } catch (const Error& e) {
    o.error = e.what();
  }
  return o;
}

std::string subgroups(const vk::DeviceLimits& l) {
  if (l.min_subgroup_size == l.max_subgroup_size) return std::to_string(l.subgroup_size);
  return fmt::format("{} ({} to {} with subgroup size control)", l.subgroup_size, l.min_subgroup_size,
                     l.max_subgroup_size);
}

// "16x16x16 float16->float32, 16x8x8 float16->float16" or "none".
std::string matrix_units(const vk::PhysicalDeviceInfo& d) {
  if (d.matrix_shapes.empty()) return "none";
  std::string out;
  for (const vk::MatrixShape& s : d.matrix_shapes)
    out += fmt::format("{}{}x{}x{} {}->{}", out.empty() ? "" : ", ", s.m, s.n, s.k, s.ab_type, s.d_type);
  return out;
}

void print_text(const vk::PhysicalDeviceInfo& d, const Opened& o) {
  fmt::print("device {}: {}\n", d.index, d.name);
  fmt::print("  type                 {}\n", vk::to_string(d.type));
  fmt::print("  vendor               {} (0x{:04x}), device id 0x{:04x}\n", vk::vendor_name(d.vendor_id), d.vendor_id,
             d.device_id);
  fmt::print("  driver               {} {} ({})\n", d.driver_name, vk::driver_version_string(d), d.driver_info);
  fmt::print("  Vulkan API           {}\n", vk::api_version_string(d.api_version));
  for (std::size_t h = 0; h < d.heaps.size(); ++h)
    fmt::print("  memory heap {}        {}{}\n", h, mib(d.heaps[h].bytes), d.heaps[h].device_local ? ", device-local" : "");
  if (!o.device) {
    fmt::print("  usable by vkpack     no: {}\n", o.error);
    return;
  }
  const vk::Device& dev = *o.device;
  const vk::DeviceLimits& l = dev.limits();
  fmt::print("  memory               {}\n", dev.memory().mapped()
                                                ? "mapped (device-local memory is host-visible)"
                                                : "staged (copies through staging buffers, as on a discrete GPU)");
  fmt::print("  limits profile       {}\n", dev.limits_profile().empty() ? "none (the driver's limits)"
                                                                          : dev.limits_profile());
  fmt::print("  subgroup size        {}\n", subgroups(l));
  fmt::print("  max storage buffer   {} per binding; offsets aligned to {} bytes\n", mib(l.max_storage_buffer_range),
             l.min_storage_buffer_offset_alignment);
  fmt::print("  max workgroup        {} invocations, {} x {} x {}; shared memory {} KiB\n", l.max_workgroup_invocations,
             l.max_workgroup_size[0], l.max_workgroup_size[1], l.max_workgroup_size[2],
             l.max_shared_memory_bytes / 1024);
  fmt::print("  workgroup count      {} x {} x {}\n", l.max_workgroup_count[0], l.max_workgroup_count[1],
             l.max_workgroup_count[2]);
  fmt::print("  readback             {}\n",
             dev.features().coherent_readback ? "host-coherent" : "not host-coherent (invalidated)");
  fmt::print("  timestamps           {}\n", l.timestamps ? "yes" : "no");
  fmt::print("  matrix units         {}{}\n", matrix_units(d),
             d.matrix_shapes.empty()             ? ""
             : dev.features().cooperative_matrix ? " (VK_NV_cooperative_matrix, enabled)"
                                                 : " (VK_NV_cooperative_matrix, not enabled: needs 16-bit storage, "
                                                   "shaderFloat16 and vulkanMemoryModel)");
  fmt::print("  usable by vkpack     yes\n");
}

void print_json(const std::vector<vk::PhysicalDeviceInfo>& devices, const std::vector<Opened>& opened) {
  fmt::print("[");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const vk::PhysicalDeviceInfo& d = devices[i];
    const Opened& o = opened[i];
    const vk::DeviceLimits& l = o.device ? o.device->limits() : d.limits;
    std::string heaps;
    for (std::size_t h = 0; h < d.heaps.size(); ++h)
      heaps += fmt::format("{}{{\"bytes\": {}, \"device_local\": {}}}", h ? ", " : "", d.heaps[h].bytes,
                           d.heaps[h].device_local);
    const std::string usable = o.device
                                   ? fmt::format("\"usable\": true, \"memory\": {}, \"limits_profile\": {}",
                                                 json_string(std::string(vk::to_string(o.device->memory().mode()))),
                                                 json_string(o.device->limits_profile()))
                                   : "\"usable\": false, \"error\": " + json_string(o.error);
    fmt::print("{}\n  {{\"index\": {}, \"name\": {}, \"type\": {}, \"vendor\": {}, \"vendor_id\": {}, \"device_id\": {}, "
               "\"driver\": {}, \"driver_info\": {}, \"driver_version\": {}, \"api_version\": {}, \"heaps\": [{}], "
               "\"subgroup_size\": {}, \"min_subgroup_size\": {}, \"max_subgroup_size\": {}, "
               "\"max_storage_buffer_range\": {}, \"matrix_units\": {}, {}}}",
               i ? "," : "", d.index, json_string(d.name), json_string(std::string(vk::to_string(d.type))),
               json_string(std::string(vk::vendor_name(d.vendor_id))), d.vendor_id, d.device_id,
               json_string(d.driver_name), json_string(d.driver_info), json_string(vk::driver_version_string(d)),
               json_string(vk::api_version_string(d.api_version)), heaps, l.subgroup_size, l.min_subgroup_size,
               l.max_subgroup_size, l.max_storage_buffer_range, json_string(matrix_units(d)), usable);
  }
  fmt::print("\n]\n");
}

void print_profiles() {
  for (const vk::LimitsProfile& p : vk::limits_profiles()) {
    const vk::DeviceLimits& l = p.limits;
    fmt::print("{}: {}\n  source: {}\n", p.name, p.device, p.source);
    fmt::print("  workgroup count {} x {} x {}, {} invocations, shared {} KiB, storage buffer {}, "
               "{} storage buffers per stage, push constants {} bytes, readback {}\n",
               l.max_workgroup_count[0], l.max_workgroup_count[1], l.max_workgroup_count[2],
               l.max_workgroup_invocations, l.max_shared_memory_bytes / 1024, mib(l.max_storage_buffer_range),
               l.max_storage_buffers_per_stage, l.max_push_constants_bytes,
               p.coherent_readback ? "coherent" : "not coherent");
  }
}

}  // namespace

int devices_command(const std::vector<std::string>& args) {
  bool json = false;
  vk::DeviceOptions options;
  options.pipeline_cache_dir = "";
  for (std::size_t i = 0; i < args.size(); ++i) {
    const std::string& a = args[i];
    const bool has_value = i + 1 < args.size();
    if (a == "--json") {
      json = true;
    } else if (a == "--profiles") {
      print_profiles();
      return 0;
    } else if (a == "--memory" && has_value) {
      options.memory = vk::parse_memory_mode(args[++i], "--memory");
    } else if (a == "--limits-profile" && has_value) {
      options.limits_profile = args[++i];
      if (options.limits_profile != "none") vk::limits_profile(options.limits_profile, "--limits-profile");
    } else {
      std::fprintf(stderr,
                   "vkpack devices: unknown option '%s' (accepts --json, --memory mapped|staged|auto, "
                   "--limits-profile NAME, --profiles)\n",
                   a.c_str());
      return 2;
    }
  }
  const vk::Instance instance;
  std::vector<Opened> opened;
  for (const vk::PhysicalDeviceInfo& d : instance.devices()) opened.push_back(open(instance, d.index, options));
  if (json) {
    print_json(instance.devices(), opened);
    return 0;
  }
  for (std::size_t i = 0; i < instance.devices().size(); ++i) {
    if (i) fmt::print("\n");
    print_text(instance.devices()[i], opened[i]);
  }
  return 0;
}

}  // namespace vkp::tool
