// What every fuzz target under tests/fuzz/ shares: the promise each reader of outside
// bytes makes, checked on whatever bytes libFuzzer makes up. A reader returns a valid
// result or throws vkp::Error (its own type, naming what is wrong); anything else (a
// crash, a sanitizer report, a hang, another exception, an allocation beyond libFuzzer's
// -malloc_limit_mb) is a finding.
#pragma once

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <span>
#include <string>

#include "core/error.h"
#include "core/log.h"

namespace vkp::fuzz {

// Runs `read`; a vkp::Error is a clean refusal, any other exception escapes to libFuzzer.
template <class Read>
int expect_clean(Read&& read) {
  static const bool quiet = (logger().set_level(LogLevel::error), true);  // readers warn about what they skip
  (void)quiet;
  try {
    read();
  } catch (const Error&) {
  }
  return 0;
}

inline std::span<const std::byte> bytes_of(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const std::byte*>(data), size};
}

// A directory of this process under $TMPDIR for readers that take a path; write() puts
// the input in a file there, replacing what the previous input left.
class Scratch {
 public:
  Scratch() : dir_(std::filesystem::temp_directory_path() / ("vkpack-fuzz-" + std::to_string(::getpid()))) {
    std::filesystem::remove_all(dir_);
    std::filesystem::create_directories(dir_);
  }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  const std::filesystem::path& dir() const { return dir_; }
  std::filesystem::path write(const std::string& name, const std::uint8_t* data, std::size_t size) const {
    const std::filesystem::path path = dir_ / name;
    std::ofstream(path, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                                    static_cast<std::streamsize>(size));
    return path;
  }

 private:
  std::filesystem::path dir_;
};

}  // namespace vkp::fuzz
