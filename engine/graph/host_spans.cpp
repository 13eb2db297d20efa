#include "engine/graph/host_spans.h"

namespace vkp::graph {

const char* to_string(HostSpan::Kind kind) {
  switch (kind) {
    case HostSpan::Kind::feed: return "feed";
    case HostSpan::Kind::submit: return "submit";
    case HostSpan::Kind::wait: return "wait";
  }
  return "?";
}

void HostSpanLog::note(HostSpan::Kind kind, int variant, std::chrono::steady_clock::time_point begin) {
  if (spans_.size() >= 2 * kKept) spans_.erase(spans_.begin(), spans_.begin() + kKept);
  spans_.push_back({kind, variant, begin, std::chrono::steady_clock::now()});
}

std::vector<HostSpan> HostSpanLog::since(std::chrono::steady_clock::time_point since) const {
  std::vector<HostSpan> spans;
  for (const HostSpan& s : spans_)
    if (s.begin >= since) spans.push_back(s);
  return spans;
}

}  // namespace vkp::graph
