// The static memory plan: tensors whose lifetimes do not overlap share bytes, and the
// plans of real models take less than giving every tensor its own.
#include "engine/graph/memory_plan.h"

#include <gtest/gtest.h>

#include "test_models.h"
#include "core/rng.h"
#include "vk_test_env.h"
#include "engine/graph/layers.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"

namespace vkp::test {
namespace {

using namespace vkp::graph;

bool overlap(const Lifetime& a, std::uint64_t oa, const Lifetime& b, std::uint64_t ob) {
  const bool in_time = a.first <= b.last && b.first <= a.last;
  const bool in_space = oa < ob + b.bytes && ob < oa + a.bytes;
  return in_time && in_space;
}

TEST(MemoryPlan, DisjointLifetimesShareAndOverlappingOnesDoNot) {
  const std::vector<Lifetime> tensors = {{0, 1, 1000}, {1, 2, 1000}, {2, 3, 1000}, {3, 4, 300}, {0, 4, 10}};
  const MemoryPlan plan = plan_memory(tensors, 256);
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    EXPECT_EQ(plan.offsets[i] % 256, 0u);
    for (std::size_t j = i + 1; j < tensors.size(); ++j)
      EXPECT_FALSE(overlap(tensors[i], plan.offsets[i], tensors[j], plan.offsets[j])) << i << " and " << j;
  }
  EXPECT_EQ(plan.offsets[0], plan.offsets[2]) << "the first and third never live together";
  EXPECT_LT(plan.arena_bytes, plan.unshared_bytes);
  EXPECT_EQ(plan.arena_bytes, 1024u + 1024u + 256u);
}

// Random lifetimes: never two live tensors on the same bytes.
TEST(MemoryPlan, RandomLifetimesNeverCollide) {
  Rng rng(3);
  std::vector<Lifetime> tensors;
  for (int i = 0; i < 200; ++i) {
    const int first = static_cast<int>(rng.below(100));
    tensors.push_back({first, first + static_cast<int>(rng.below(20)), 4 + rng.below(5000)});
  }
  const MemoryPlan plan = plan_memory(tensors, 64);
  for (std::size_t i = 0; i < tensors.size(); ++i)
    for (std::size_t j = i + 1; j < tensors.size(); ++j)
      ASSERT_FALSE(overlap(tensors[i], plan.offsets[i], tensors[j], plan.offsets[j])) << i << " and " << j;
}

// Sharing saves at least `saved` of the step's memory, against every tensor on bytes of
// its own (unshared_bytes).
void expect_plan_shares(Model (*build)(Graph&, std::int64_t), std::int64_t batch, double saved) {
  Graph g;
  const Model m = build(g, batch);
  const std::vector<Tensor> train = momentum(g, 0.1f).minimize(m.loss);
  Session session(g, device());
  const auto dims = m.x.dims();
  Program& p = session.program({{m.x, f32(dims)}, {m.labels, i32({batch})}}, {m.loss}, train);
  EXPECT_LT(p.plan().memory.arena_bytes, p.plan().memory.unshared_bytes);
  EXPECT_LT(static_cast<double>(p.plan().memory.arena_bytes),
            static_cast<double>(p.plan().memory.unshared_bytes) * (1.0 - saved))
      << "sharing should save at least " << saved << " of a training step's memory";
}

// Most of the MLP's step lives through it (activations kept for the backward pass, the
// parameters' gradients), and its GEMMs need no workspace (GPUs never do; CPU devices
// read these operands in place): sharing saves about a fifth (18432 of 22784 bytes).
TEST(MemoryPlan, MlpTrainingStepSharesMemory) { expect_plan_shares(mlp, 64, 0.1); }
TEST(MemoryPlan, ConvnetTrainingStepSharesMemory) { expect_plan_shares(convnet, 16, 0.25); }

}  // namespace
}  // namespace vkp::test
