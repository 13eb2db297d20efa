// The names of the files in a directory, sorted: what a test compares a directory with.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

namespace vkp::test {

inline std::vector<std::string> sorted_file_names(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

}  // namespace vkp::test
