// A whole file into memory, for the readers of core that parse bytes (npz, images).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace vkp {

// Error(io) naming the file and the reason when it cannot be opened or read.
std::vector<std::byte> read_whole_file(const std::string& path);

}  // namespace vkp
