#include "core/atomic_file.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <regex>

#include "core/crash_point.h"
#include "core/error.h"

namespace vkp {
namespace {

// `what` is a view so that a literal allocates nothing before errno is read.
[[noreturn]] void fail_io(const std::string& path, std::string_view what, int error_number) {
  throw Error(ErrorCode::io, path + ": " + std::string(what) + ": " + std::strerror(error_number));
}

}  // namespace

AtomicFile::AtomicFile(std::string target) : target_(std::move(target)) {
  // A name of our own (pid and a random suffix, created exclusively), so that writers
  // sharing a directory never collide.
  std::random_device random;
  for (int attempt = 0; attempt < 16 && fd_ < 0; ++attempt) {
    char suffix[48];
    std::snprintf(suffix, sizeof suffix, ".tmp.%ld.%08x", static_cast<long>(getpid()), random());
    path_ = target_ + suffix;
    fd_ = ::open(path_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd_ < 0 && errno != EEXIST) break;
  }
  const int error_number = errno;
  if (fd_ < 0) fail_io(target_, "cannot create a temporary file '" + path_ + "' beside it", error_number);
}

AtomicFile::~AtomicFile() {
  if (fd_ >= 0) ::close(fd_);
  if (!committed_) ::unlink(path_.c_str());
}

void AtomicFile::write(std::span<const std::byte> bytes) {
  while (!bytes.empty()) {
    const ssize_t n = ::write(fd_, bytes.data(), bytes.size());
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail_io(target_, "cannot write", errno);
    bytes = bytes.subspan(static_cast<std::size_t>(n));
  }
}

void AtomicFile::commit() {
  if (::fsync(fd_) != 0) fail_io(target_, "cannot flush to disk (fsync)", errno);
  const int fd = fd_;
  fd_ = -1;
  if (::close(fd) != 0) fail_io(target_, "cannot close", errno);
  const bool crash_points = crash_points_armed();
  const std::string name = crash_points ? std::filesystem::path(target_).filename().string() : std::string();
  if (crash_points) crash_point("before-rename/" + name);
  if (::rename(path_.c_str(), target_.c_str()) != 0) {
    const int error_number = errno;
    fail_io(target_, "cannot rename the temporary file '" + path_ + "' over it", error_number);
  }
  committed_ = true;
  // The rename is durable only once the directory entry is on disk.
  std::string dir = std::filesystem::path(target_).parent_path().string();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd < 0) fail_io(target_, "cannot open its directory to flush the rename", errno);
  // Some file systems cannot fsync a directory (EINVAL); the file is complete anyway.
  const bool ok = ::fsync(dir_fd) == 0 || errno == EINVAL;
  const int error_number = errno;
  ::close(dir_fd);
  if (!ok) fail_io(target_, "cannot flush its directory (fsync)", error_number);
  if (crash_points) crash_point("after-rename/" + name);
}

void write_file_atomically(const std::string& path, std::string_view contents) {
  AtomicFile file(path);
  file.write(contents);
  file.commit();
}

std::vector<std::string> remove_stale_temporaries(const std::string& dir) {
  namespace fs = std::filesystem;
  static const std::regex temporary(R"(.+\.tmp\.([0-9]+)\.[0-9a-f]{8})");
  std::vector<std::string> removed;
  std::error_code ec;
  for (const fs::directory_entry& e : fs::directory_iterator(dir, ec)) {
    std::smatch m;
    const std::string name = e.path().filename().string();
    if (!std::regex_match(name, m, temporary)) continue;
    const long pid = std::stol(m[1].str());
    if (pid == static_cast<long>(getpid())) continue;
    if (::kill(static_cast<pid_t>(pid), 0) == 0 || errno == EPERM) continue;  // its writer still runs
    std::error_code remove_error;
    if (fs::remove(e.path(), remove_error)) removed.push_back(e.path().string());
  }
  return removed;
}

}  // namespace vkp
