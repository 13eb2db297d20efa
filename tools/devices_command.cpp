#include <cstdio>

#include <fmt/format.h>

#include "commands.h"
#include "vkpack/engine/vk/instance.h"

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

void print_text(const vk::PhysicalDeviceInfo& d) {
  fmt::print("device {}: {}\n", d.index, d.name);
  fmt::print("  type                 {}\n", vk::to_string(d.type));
  fmt::print("  vendor               {} (0x{:04x}), device id 0x{:04x}\n", vk::vendor_name(d.vendor_id), d.vendor_id,
             d.device_id);
  fmt::print("  driver               {} {} ({})\n", d.driver_name, vk::driver_version_string(d), d.driver_info);
  fmt::print("  Vulkan API           {}\n", vk::api_version_string(d.api_version));
  for (std::size_t h = 0; h < d.heaps.size(); ++h)
    fmt::print("  memory heap {}        {}{}\n", h, mib(d.heaps[h].bytes), d.heaps[h].device_local ? ", device-local" : "");
  fmt::print("  subgroup size        {}\n", d.limits.subgroup_size);
  fmt::print("  max storage buffer   {}\n", mib(d.limits.max_storage_buffer_range));
  fmt::print("  max workgroup        {} invocations, {} x {} x {}; shared memory {} KiB\n",
             d.limits.max_workgroup_invocations, d.limits.max_workgroup_size[0], d.limits.max_workgroup_size[1],
             d.limits.max_workgroup_size[2], d.limits.max_shared_memory_bytes / 1024);
  fmt::print("  timestamps           {}\n", d.limits.timestamps ? "yes" : "no");
  fmt::print("  usable by vkpack     {}\n",
             d.timeline_semaphore && d.api_version >= VK_API_VERSION_1_2 ? "yes" : "no (needs Vulkan 1.2 with timeline semaphores)");
}

void print_json(const std::vector<vk::PhysicalDeviceInfo>& devices) {
  fmt::print("[");
  for (std::size_t i = 0; i < devices.size(); ++i) {
    const vk::PhysicalDeviceInfo& d = devices[i];
    std::string heaps;
    for (std::size_t h = 0; h < d.heaps.size(); ++h)
      heaps += fmt::format("{}{{\"bytes\": {}, \"device_local\": {}}}", h ? ", " : "", d.heaps[h].bytes,
                           d.heaps[h].device_local);
    fmt::print("{}\n  {{\"index\": {}, \"name\": {}, \"type\": {}, \"vendor\": {}, \"vendor_id\": {}, \"device_id\": {}, "
               "\"driver\": {}, \"driver_info\": {}, \"driver_version\": {}, \"api_version\": {}, \"heaps\": [{}], "
               "\"subgroup_size\": {}, \"max_storage_buffer_range\": {}}}",
               i ? "," : "", d.index, json_string(d.name), json_string(std::string(vk::to_string(d.type))),
               json_string(std::string(vk::vendor_name(d.vendor_id))), d.vendor_id, d.device_id,
               json_string(d.driver_name), json_string(d.driver_info), json_string(vk::driver_version_string(d)),
               json_string(vk::api_version_string(d.api_version)), heaps, d.limits.subgroup_size,
               d.limits.max_storage_buffer_range);
  }
  fmt::print("\n]\n");
}

}  // namespace

int devices_command(const std::vector<std::string>& args) {
  bool json = false;
  for (const std::string& a : args) {
    if (a == "--json") {
      json = true;
    } else {
      std::fprintf(stderr, "vkpack devices: unknown option '%s' (accepts --json)\n", a.c_str());
      return 2;
    }
  }
  const vk::Instance instance;
  if (json) {
    print_json(instance.devices());
    return 0;
  }
  for (std::size_t i = 0; i < instance.devices().size(); ++i) {
    if (i) fmt::print("\n");
    print_text(instance.devices()[i]);
  }
  return 0;
}

}  // namespace vkp::tool
