// The host's calls of a Program's runs, for profilers (GraphProfiler): writing a
// variant's feeds, submitting it, or waiting for it and reading its fetches, two clock
// reads a call, always on.
#pragma once

#include <chrono>
#include <cstddef>
#include <vector>

namespace vkp::graph {

struct HostSpan {
  enum class Kind { feed, submit, wait };
  Kind kind = Kind::feed;
  int variant = 0;
  std::chrono::steady_clock::time_point begin, end;
};
const char* to_string(HostSpan::Kind kind);

// The recent spans, at least the last kKept; noting one allocates nothing once the log
// has reached its size (it is trimmed by halves).
class HostSpanLog {
 public:
  static constexpr std::size_t kKept = 32;
  HostSpanLog() { spans_.reserve(2 * kKept); }
  // A call of `kind` on `variant` that began at `begin` and ends now.
  void note(HostSpan::Kind kind, int variant, std::chrono::steady_clock::time_point begin);
  // The kept spans that began at or after `since`, oldest first.
  std::vector<HostSpan> since(std::chrono::steady_clock::time_point since) const;

 private:
  std::vector<HostSpan> spans_;
};

}  // namespace vkp::graph
