// Files replaced so that a reader, or a crash, or a full disk never leaves a half-written
// one: the bytes go to a temporary file beside the target (the same file system, so the
// rename is atomic), are flushed to disk, and the temporary is renamed over the target.
// On failure the temporary is removed and a previous file at the target stays as it was.
#pragma once

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace vkp {

class AtomicFile {
 public:
  // Creates the temporary; Error(io) naming `target` when it cannot.
  explicit AtomicFile(std::string target);
  ~AtomicFile();  // removes the temporary unless commit() succeeded
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  // Error(io) naming the target on a failed write (ENOSPC, EFBIG, ...).
  void write(std::span<const std::byte> bytes);
  void write(std::string_view text) { write(std::as_bytes(std::span(text.data(), text.size()))); }
  // fsyncs the data, renames it over the target, fsyncs the directory.
  void commit();

 private:
  std::string target_;
  std::string path_;
  int fd_ = -1;
  bool committed_ = false;
};

// AtomicFile in one call.
void write_file_atomically(const std::string& path, std::string_view contents);

// Removes the temporaries AtomicFile left in `dir` when its process was killed before
// commit (<target>.tmp.<pid>.<hex>) and that process is gone; a live writer's are
// kept. Returns the paths removed.
std::vector<std::string> remove_stale_temporaries(const std::string& dir);

}  // namespace vkp
