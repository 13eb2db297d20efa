#include "engine/graph/program_cache.h"

#include <algorithm>

namespace vkp::graph {

std::string ProgramCache::key(const std::vector<FeedSpec>& feeds, const std::vector<Tensor>& fetches,
                              const std::vector<Tensor>& targets, int variants, const FetchSegments& segments,
                              bool timestamps) {
  std::string key = (timestamps ? "T" : "") + std::string("v") + std::to_string(variants);
  if (!segments.empty()) {
    key += "b" + std::to_string(segments.bucket_bytes);
    for (int i : segments.fetches) key += "s" + std::to_string(i);
  }
  for (const FeedSpec& f : feeds) key += "f" + std::to_string(f.placeholder.id()) + to_string(f.type);
  for (const Tensor& t : fetches) key += "o" + std::to_string(t.id());
  for (const Tensor& t : targets) key += "t" + std::to_string(t.id());
  return key;
}

Program& ProgramCache::find_or_compile(const std::string& key, Use use,
                                       const std::function<std::unique_ptr<Program>(std::string name)>& compile) {
  auto [it, fresh] = programs_.try_emplace(key);
  if (fresh) {
    try {
      it->second.program = compile("program " + std::to_string(programs_.size()));
    } catch (...) {
      programs_.erase(it);
      throw;
    }
  }
  if (use == Use::hand_out)
    it->second.handed_out = true;
  else
    it->second.last_run = ++runs_;
  return *it->second.program;
}

void ProgramCache::trim(std::size_t limit) {
  limit = std::max<std::size_t>(limit, 1);
  for (;;) {
    std::size_t cached = 0;
    auto oldest = programs_.end();
    for (auto it = programs_.begin(); it != programs_.end(); ++it) {
      if (it->second.handed_out) continue;
      ++cached;
      if (oldest == programs_.end() || it->second.last_run < oldest->second.last_run) oldest = it;
    }
    if (cached <= limit) return;
    programs_.erase(oldest);
  }
}

std::vector<const Program*> ProgramCache::programs() const {
  std::vector<const Program*> all;
  for (const auto& [key, entry] : programs_) all.push_back(entry.program.get());
  return all;
}

}  // namespace vkp::graph
