#include "core/read_file.h"

#include <cerrno>
#include <cstring>
#include <fstream>
#include <iterator>

#include "core/error.h"

namespace vkp {

std::vector<std::byte> read_whole_file(const std::string& path) {
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorCode::io, "cannot open " + path + ": " + std::strerror(errno ? errno : ENOENT));
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw Error(ErrorCode::io, "cannot read " + path);
  std::vector<std::byte> bytes(chars.size());
  if (!chars.empty()) std::memcpy(bytes.data(), chars.data(), chars.size());
  return bytes;
}

}  // namespace vkp
