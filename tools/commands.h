// The subcommands of the vkpack command-line tool; each returns the process exit code.
#pragma once

#include <string>
#include <vector>

namespace vkp::tool {

// vkpack devices [--json]: every Vulkan device with the index trainers use.
int devices_command(const std::vector<std::string>& args);

}  // namespace vkp::tool
