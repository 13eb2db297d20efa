// vkpack: the command-line tool. `vkpack help` lists the subcommands.
#include <cstdio>
#include <string>
#include <vector>

#include "core/env.h"
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
    "  help               this text\n";

// The usage, then every environment variable vkpack reads (core/env.h).
void print_usage(std::FILE* out) {
  std::fputs(kUsage, out);
  std::fputs("\nenvironment (unset or empty: the default; any other value must be one it takes):\n", out);
  for (const vkp::env::Variable& v : vkp::env::variables())
    std::fprintf(out, "  %-22s %.*s\n  %-22s takes %.*s\n", std::string(v.name).c_str(), static_cast<int>(v.meaning.size()),
                 v.meaning.data(), "", static_cast<int>(v.takes.size()), v.takes.data());
}

}  // namespace

int main(int argc, char** argv) {
  const std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "help" || args[0] == "--help" || args[0] == "-h") {
    print_usage(args.empty() ? stderr : stdout);
    return args.empty() ? 2 : 0;
  }
  try {
    const std::vector<std::string> rest(args.begin() + 1, args.end());
    if (args[0] == "devices") return vkp::tool::devices_command(rest);
    std::fprintf(stderr, "vkpack: unknown command '%s'\n\n", args[0].c_str());
    print_usage(stderr);
    return 2;
  } catch (const vkp::Error& e) {
    std::fprintf(stderr, "vkpack: %s\n", e.what());
    return 1;
  }
}
