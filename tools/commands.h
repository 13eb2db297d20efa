// The subcommands of the vkpack command-line tool; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace vkp::tool {

// vkpack devices [--json] [--memory M] [--limits-profile P] [--profiles]: every Vulkan
// device with the index trainers use, as a Device opened with those options sees it.
int devices_command(const std::vector<std::string>& args);

}  // namespace vkp::tool
