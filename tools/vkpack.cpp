// vkpack: the command-line tool. `vkpack help` lists the subcommands.
#include <cstdio>
#include <string>
#include <vector>

#include "core/error.h"
#include "commands.h"

namespace {

constexpr const char* kUsage =
    "usage: vkpack <command> [options]\n"
    "\n"
    "commands:\n"
    "  devices [--json] [--memory mapped|staged|auto] [--limits-profile NAME] [--profiles]\n"
    "                     list every Vulkan device: index, name, type, vendor, driver,\n"
    "                     API version, memory heaps, memory mode (mapped or staged),\n"
    "                     limits profile, subgroup sizes, limits as vkpack will use them;\n"
    "                     --profiles lists the limits profiles and their sources\n"
    "  help               this text\n"
    "\n"
    "environment:\n"
    "  VKPACK_LOG_LEVEL   debug | info | warn | error (default info)\n"
    "  VKPACK_CACHE_DIR   where compiled pipelines are cached (default ~/.cache/vkpack)\n"
    "  VKPACK_MEMORY      mapped | staged | auto: how devices reach their memory (default auto)\n"
    "  VKPACK_LIMITS_PROFILE  a profile of `vkpack devices --profiles`, or none (default)\n"
    "  VKPACK_CRASH_AT    <point>[#n]: SIGKILL at the n-th pass of a crash point (crash tests)\n";

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    std::fputs(kUsage, args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  try {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "devices") return vkp::tool::devices_command(rest);
    std::fprintf(stderr, "vkpack: unknown command '%s'\n\n%s", args[0].c_str(), kUsage);
    return 2;
  } catch (const vkp::Error& e) {
    std::fprintf(stderr, "vkpack: %s\n", e.what());
    return 1;
  }
}
