#include "dataflow/internal/file_bytes.h"

#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <string>

#include "core/error.h"

namespace vkp::dataflow {
namespace {

struct GzCloser {
  void operator()(gzFile f) const { gzclose(f); }
};

}  // namespace

std::vector<std::uint8_t> read_file_bytes(const std::filesystem::path& path, std::size_t limit) {
  errno = 0;
  std::unique_ptr<gzFile_s, GzCloser> file(gzopen(path.c_str(), "rb"));
  if (!file)
    throw Error(ErrorCode::io, "cannot open " + path.string() + ": " +
                                   (errno ? std::strerror(errno) : "out of memory"));
  gzbuffer(file.get(), 1 << 18);
  std::vector<std::uint8_t> bytes;
  constexpr std::size_t kStep = 1 << 20;
  while (bytes.size() < limit) {
    const std::size_t old = bytes.size(), step = std::min(kStep, limit - old);
    bytes.resize(old + step);
    const int got = gzread(file.get(), bytes.data() + old, static_cast<unsigned>(step));
    if (got < 0) {
      int code = 0;
      const char* message = gzerror(file.get(), &code);
      throw Error(code == Z_ERRNO ? ErrorCode::io : ErrorCode::bad_data,
                  "cannot read " + path.string() + ": " +
                      (code == Z_ERRNO ? std::strerror(errno) : std::string("corrupt gzip stream (") + message + ")"));
    }
    bytes.resize(old + static_cast<std::size_t>(got));
    if (got == 0) break;
  }
  if (bytes.size() == limit) return bytes;  // the head asked for
  // A gzip stream cut short reads as a short file; zlib says so only here.
  int code = 0;
  const char* message = gzerror(file.get(), &code);
  if (code != Z_OK)
    throw Error(ErrorCode::bad_data, "cannot read " + path.string() + ": the gzip stream is truncated or corrupt (" +
                                         message + ") after " + std::to_string(bytes.size()) + " bytes");
  bytes.shrink_to_fit();
  return bytes;
}

std::filesystem::path first_existing(const std::vector<std::filesystem::path>& candidates, const std::string& what) {
  std::string tried;
  for (const std::filesystem::path& p : candidates) {
    std::error_code ec;
    if (std::filesystem::is_regular_file(p, ec)) return p;
    tried += (tried.empty() ? "" : ", ") + p.string();
  }
  throw Error(ErrorCode::io, what + ": no file found; looked for " + tried);
}

}  // namespace vkp::dataflow
