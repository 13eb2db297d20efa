#include "core/source_path.h"

#include <array>

namespace vkp {

std::string_view project_path(std::string_view file) {
  static constexpr std::array<std::string_view, 10> kTop = {"core",  "dataflow", "engine",   "towers", "callbacks",
                                                            "train", "tools",    "examples", "tests",  "bench"};
  // Each folder boundary in order: the start of the path, then after every '/'.
  for (std::size_t at = 0; at < file.size();) {
    const std::string_view rest = file.substr(at);
    for (std::string_view top : kTop)
      if (rest.size() > top.size() && rest.starts_with(top) && rest[top.size()] == '/') return rest;
    const std::size_t slash = file.find('/', at);
    if (slash == std::string_view::npos) break;
    at = slash + 1;
  }
  return file;
}

}  // namespace vkp
