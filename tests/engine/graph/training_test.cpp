// Training end to end on the device: models learn separable data, runs are bitwise
// reproducible, optimizers match the reference, and a recorded step replays without
// allocating.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>

#include "core/error.h"
#include "engine/graph/internal/reference.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/graph/variables.h"
#include "max_difference.h"
#include "test_models.h"
#include "vk_test_env.h"

// Counts operator new calls while `counting` is set: the replay test checks that a
// steady training loop makes none.
namespace {
std::atomic<bool> counting{false};
std::atomic<long> allocations{0};
}  // namespace

// The replacements pair malloc with free; GCC cannot see that they match. Every
// non-aligned form is replaced, the nothrow ones too (std::stable_sort's buffer uses
// them), so that no block is allocated by one allocator and freed by the other.
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
namespace {
void* counted_malloc(std::size_t size) noexcept {
  if (counting.load(std::memory_order_relaxed)) allocations.fetch_add(1, std::memory_order_relaxed);
  return std::malloc(size == 0 ? 1 : size);
}
}  // namespace
void* operator new(std::size_t size) {
  if (void* p = counted_malloc(size)) return p;
  throw std::bad_alloc();
}
void* operator new[](std::size_t size) { return ::operator new(size); }
void* operator new(std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void* operator new[](std::size_t size, const std::nothrow_t&) noexcept { return counted_malloc(size); }
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, std::size_t) noexcept { std::free(p); }
void operator delete[](void* p) noexcept { std::free(p); }
void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace vkp::test {
namespace {

using namespace vkp::graph;

struct Trained {
  std::unique_ptr<Graph> graph;
  std::unique_ptr<Session> session;
  double first = 0, last = 0;  // the loss of the first step and the mean of the last 10
};

Trained train(Model (*build)(Graph&, std::int64_t), std::pair<Array, Array> (*data)(std::int64_t, std::uint64_t),
              int steps) {
  Trained t;
  t.graph = std::make_unique<Graph>(11);
  const Model m = build(*t.graph, 32);
  const std::vector<Tensor> step = momentum(*t.graph, 0.05f, 0.9f).minimize(m.loss);
  t.session = std::make_unique<Session>(*t.graph, device());
  for (int i = 0; i < steps; ++i) {
    auto [x, labels] = data(32, static_cast<std::uint64_t>(i));
    const double loss =
        t.session->run({{m.x, std::move(x)}, {m.labels, std::move(labels)}}, {m.loss}, step)[0].data<float>()[0];
    if (i == 0) t.first = loss;
    if (i >= steps - 10) t.last += loss / 10;
  }
  EXPECT_EQ(t.session->global_step(), static_cast<std::uint64_t>(steps));
  return t;
}

// Bound: the mean loss of the last 10 of 200 steps is below 0.1 (from about ln 4 = 1.39).
TEST(Training, MlpLearnsSeparableData) {
  const Trained t = train(mlp, mlp_batch, 200);
  EXPECT_GT(t.first, 1.0);
  EXPECT_LT(t.last, 0.1) << "first step " << t.first;
}

// Bound: conv-BN-relu-pool-FC, last 10 of 200 steps below 0.1.
TEST(Training, ConvnetLearnsSeparableImages) {
  const Trained t = train(convnet, image_batch, 200);
  EXPECT_GT(t.first, 1.0);
  EXPECT_LT(t.last, 0.1) << "first step " << t.first;
}

TEST(Training, TwoRunsGiveBitwiseEqualVariables) {
  Trained a = train(convnet, image_batch, 20), b = train(convnet, image_batch, 20);
  ASSERT_FALSE(a.session->variables().names().empty());
  for (const std::string& name : a.session->variables().names()) {
    const Array va = a.session->variable(name), vb = b.session->variable(name);
    ASSERT_EQ(va.nbytes(), vb.nbytes());
    EXPECT_EQ(std::memcmp(va.bytes().data(), vb.bytes().data(), va.nbytes()), 0) << name;
  }
}

// Three steps of each optimizer on the device against the reference.
TEST(Training, OptimizersMatchTheReference) {
  const std::pair<const char*, std::function<Optimizer(Graph&)>> optimizers[] = {
      {"sgd", [](Graph& g) { return sgd(g, 0.1f); }},
      {"momentum", [](Graph& g) { return momentum(g, 0.1f, 0.8f); }},
      {"nesterov", [](Graph& g) { return momentum(g, 0.1f, 0.8f, true); }},
      {"adam", [](Graph& g) { return adam(g, 0.01f); }},
      {"adamw", [](Graph& g) { return adamw(g, 0.01f, 0.1f); }},
  };
  for (const auto& [name, make] : optimizers) {
    SCOPED_TRACE(name);
    Graph g(3);
    const Model m = mlp(g, 8);
    const std::vector<Tensor> step = make(g).minimize(m.loss);
    Session session(g, device());
    RefState ref = RefState::initial(g);
    for (int i = 0; i < 3; ++i) {
      auto [x, labels] = mlp_batch(8, static_cast<std::uint64_t>(i));
      ref.scalars[Graph::kStepWord] = static_cast<double>(i);
      evaluate_reference(g, {{m.x.id(), RefTensor::from(x)}, {m.labels.id(), RefTensor::from(labels)}}, {}, step, ref);
      session.run({{m.x, std::move(x)}, {m.labels, std::move(labels)}}, {}, step);
    }
    for (const auto& [var, want] : ref.variables) {
      const RefTensor got = RefTensor::from(session.variable(var));
      for (std::size_t i = 0; i < got.values.size(); ++i)
        ASSERT_NEAR(got.values[i], want.values[i], 1e-6 * std::max(1.0, std::abs(want.values[i])))
            << var << "[" << i << "]";
    }
  }
}

TEST(Training, HyperparametersChangeWithoutRecompiling) {
  Graph g;
  const Tensor w = get_variable(g, "w", {4}, ones());
  // A gradient of ones, whatever w is.
  const Tensor grad = w * 0.0f + 1.0f;
  const std::vector<Tensor> step = sgd(g, 0.5f).apply_gradients({{grad, w}});
  Session session(g, device());
  session.run({}, {}, step);  // w = 1 - 0.5
  session.set_hyperparameter("learning_rate", 0.25f);
  session.run({}, {}, step);  // w = 0.5 - 0.25
  EXPECT_EQ(session.program_count(), 1u);
  EXPECT_EQ(session.variable("w").data<float>()[3], 0.25f);
  EXPECT_EQ(session.hyperparameter("learning_rate"), 0.25f);
}

// 1000 replays of a recorded training step: no device memory and no C++ heap
// allocation after the first. Measured without validation layers, which keep their own
// records of every submission.
TEST(Training, ThousandReplaysAllocateNothing) {
  vk::Instance bare;
  vk::Device dev(bare, device_index(), device_options());
  Graph g(5);
  const Model m = convnet(g, 16);
  const std::vector<Tensor> step = adam(g, 1e-3f).minimize(m.loss);
  Session session(g, dev);
  Program& program = session.program({{m.x, f32({16, 8, 8, 1})}, {m.labels, i32({16})}}, {m.loss}, step);
  auto [x, labels] = image_batch(16, 0);
  const std::vector<Array> feeds = {std::move(x), std::move(labels)};
  std::vector<Array> outputs;
  session.run_program(program, feeds, outputs);
  const std::uint64_t device_bytes = dev.memory().allocated_bytes();
  allocations = 0;
  counting = true;
  for (int i = 0; i < 1000; ++i) session.run_program(program, feeds, outputs);
  counting = false;
  EXPECT_EQ(allocations.load(), 0);
  EXPECT_EQ(dev.memory().allocated_bytes(), device_bytes);
  EXPECT_EQ(session.global_step(), 1001u);
}

// A session that follows a clock writes the clock's step into every run (Adam's bias
// correction reads it: the update is the one a session at that step of its own makes),
// does not advance it, refuses set_global_step, and counts on from the clock when let go.
TEST(Training, ASessionReadsTheClockItFollowsThenCountsOnFromIt) {
  const auto adam_step = [](std::shared_ptr<const StepClock> clock, std::int64_t own_step) {
    Graph g(7);
    const Model m = convnet(g, 4);
    const std::vector<Tensor> step = adam(g, 0.1f).minimize(m.loss);
    Session s(g, device());
    if (clock)
      s.follow_global_step(clock);
    else
      s.set_global_step(static_cast<std::uint64_t>(own_step));
    auto [x, labels] = image_batch(4, 3);
    s.run({{m.x, std::move(x)}, {m.labels, std::move(labels)}}, {}, step);
    return std::make_pair(s.variable(std::get<VariableAttrs>(g.trainable_variables()[0].node().attrs).var_name),
                          s.global_step());
  };
  auto clock = std::make_shared<StepClock>();
  clock->set(41);
  const auto [followed, step_after] = adam_step(clock, 0);
  EXPECT_EQ(step_after, 41u) << "a followed clock is its owner's to advance";
  const auto [own, own_after] = adam_step(nullptr, 41);
  EXPECT_EQ(own_after, 42u);
  EXPECT_EQ(max_difference(followed, own), 0.0f) << "the run read another step than the clock's";
  const auto [first, unused] = adam_step(nullptr, 0);
  EXPECT_GT(max_difference(followed, first), 0.0f) << "Adam's update does not depend on the step here";

  Graph g(7);
  const Model m = convnet(g, 4);
  const std::vector<Tensor> step = adam(g, 0.1f).minimize(m.loss);
  Session s(g, device());
  s.follow_global_step(clock);
  EXPECT_THROW(s.set_global_step(3), Error);
  clock->advance();
  EXPECT_EQ(s.global_step(), 42u);
  s.follow_global_step(nullptr);
  auto [x, labels] = image_batch(4, 3);
  s.run({{m.x, std::move(x)}, {m.labels, std::move(labels)}}, {}, step);
  EXPECT_EQ(s.global_step(), 43u);
}

// Hyperparameters outside what their update rule means are refused when the optimizer is
// made, naming the optimizer and the hyperparameter.
TEST(Optimizers, HyperparametersOutOfRangeAreErrorsNamingThem) {
  struct Case {
    const char* what;
    void (*make)(Graph&);
  };
  const Case cases[] = {
      {"sgd: learning_rate is nan", [](Graph& g) { sgd(g, std::numeric_limits<float>::quiet_NaN()); }},
      {"sgd: learning_rate is -0.1", [](Graph& g) { sgd(g, -0.1f); }},
      {"momentum: momentum is 1.5", [](Graph& g) { momentum(g, 0.1f, 1.5f); }},
      {"adam: learning_rate is inf", [](Graph& g) { adam(g, std::numeric_limits<float>::infinity()); }},
      {"adam: beta2 is 1", [](Graph& g) { adam(g, 1e-3f, 0.9f, 1.0f); }},
      {"adam: epsilon is -1e-08", [](Graph& g) { adam(g, 1e-3f, 0.9f, 0.999f, -1e-8f); }},
      {"adamw: weight_decay is -0.01", [](Graph& g) { adamw(g, 1e-3f, -0.01f); }},
  };
  for (const Case& c : cases) {
    Graph g(1);
    try {
      c.make(g);
      ADD_FAILURE() << c.what << ": accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(c.what), std::string::npos) << e.what();
    }
  }
  Graph g(1);
  EXPECT_NO_THROW(sgd(g, 0.0f));  // a learning rate of 0 freezes, as schedules use
}

}  // namespace
}  // namespace vkp::test
