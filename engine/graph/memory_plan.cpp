#include "engine/graph/memory_plan.h"

#include <algorithm>
#include <numeric>

namespace vkp::graph {

MemoryPlan plan_memory(const std::vector<Lifetime>& tensors, std::uint64_t alignment) {
  auto aligned = [&](std::uint64_t v) { return (v + alignment - 1) / alignment * alignment; };
  MemoryPlan plan;
  plan.offsets.assign(tensors.size(), 0);
  std::vector<std::size_t> order(tensors.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    if (tensors[a].bytes != tensors[b].bytes) return tensors[a].bytes > tensors[b].bytes;
    return tensors[a].first < tensors[b].first;
  });
  struct Placed {
    std::uint64_t begin, end;
    int first, last;
  };
  std::vector<Placed> placed;
  for (std::size_t i : order) {
    const Lifetime& t = tensors[i];
    plan.unshared_bytes += aligned(t.bytes);
    // Byte ranges of tensors alive at the same time, by start.
    std::vector<std::pair<std::uint64_t, std::uint64_t>> busy;
    for (const Placed& p : placed)
      if (p.first <= t.last && t.first <= p.last) busy.emplace_back(p.begin, p.end);
    std::sort(busy.begin(), busy.end());
    std::uint64_t at = 0;
    for (const auto& [begin, end] : busy) {
      if (at + t.bytes <= begin) break;
      at = std::max(at, aligned(end));
    }
    plan.offsets[i] = at;
    placed.push_back({at, at + t.bytes, t.first, t.last});
    plan.arena_bytes = std::max(plan.arena_bytes, aligned(at + t.bytes));
  }
  return plan;
}

}  // namespace vkp::graph
