// Static memory plan for one program: every intermediate tensor (and every op's
// scratch space) gets an offset in one arena; tensors whose lifetimes do not overlap
// share bytes.
#pragma once

#include <cstdint>
#include <vector>

namespace vkp::graph {

struct Lifetime {
  int first = 0;            // schedule position where the bytes are first written
  int last = 0;             // last position that reads them (inclusive)
  std::uint64_t bytes = 0;
};

struct MemoryPlan {
  std::vector<std::uint64_t> offsets;  // by lifetime, in bytes, aligned
  std::uint64_t arena_bytes = 0;
  std::uint64_t unshared_bytes = 0;    // what giving every tensor its own bytes would take
};

// Greedy by size: the largest tensors are placed first, each at the lowest aligned
// offset where it overlaps no placed tensor that is alive at the same time.
MemoryPlan plan_memory(const std::vector<Lifetime>& tensors, std::uint64_t alignment);

}  // namespace vkp::graph
