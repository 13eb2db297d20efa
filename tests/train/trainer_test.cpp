// The trainer loop: hook order, StopTraining, after_train after an error, a run_step of
// one's own (a GAN alternating two optimizers), a hand-built graph through set_step, and
// a bad datapoint named by its input.
#include <gtest/gtest.h>

#include <cmath>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/periodic.h"
#include "core/error.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

using namespace graph;

TEST(Trainer, CallsHooksInTensorpackOrder) {
  auto rec = std::make_shared<HookRecorder>();
  train::TrainConfig config = tiny_config(2, 2);
  config.callbacks = {rec};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);

  const std::vector<std::string> expected = {
      "setup_graph@0",  "before_train@0",  "before_epoch@0", "before_run@0",    "after_run@1",
      "trigger_step@1", "before_run@1",    "after_run@2",    "trigger_step@2",  "after_epoch@2",
      "trigger_epoch@2", "before_epoch@2", "before_run@2",   "after_run@3",     "trigger_step@3",
      "before_run@3",   "after_run@4",     "trigger_step@4", "after_epoch@4",   "trigger_epoch@4",
      "after_train@4"};
  EXPECT_EQ(rec->hooks, expected);
  EXPECT_EQ(trainer.global_step(), 4);
  EXPECT_EQ(trainer.epoch_num(), 2);
  EXPECT_EQ(static_cast<std::int64_t>(trainer.session().global_step()), 4);
}

TEST(Trainer, LearnsTheTinyProblem) {
  train::TrainConfig config = tiny_config(8, 6);
  train::SimpleTrainer trainer(device(), 3);
  train::launch_train_with_config(std::move(config), trainer);
  // Three separable classes: after 48 steps the cost is far below log(3) = 1.10.
  EXPECT_LT(trainer.last_cost(), 0.35);
}

// While it trains, the trainer owns the global step: its session reads it (from a starting
// step of 7 here, which a session counting on its own would not know) and cannot be set
// behind its back; after training the session counts on from the trainer's last step.
TEST(Trainer, OwnsTheGlobalStepItsSessionReads) {
  train::TrainConfig config = tiny_config(3, 2);
  config.starting_global_step = 7;
  train::SimpleTrainer trainer(device(), 3);
  std::vector<std::pair<std::uint64_t, std::int64_t>> seen;  // (session's, trainer's) before each step
  auto look = std::make_shared<Hooks>();
  bool refused = false;
  look->before_run = [&](callbacks::TrainerView& t) {
    seen.emplace_back(trainer.session().global_step(), t.global_step());
    try {
      trainer.session().set_global_step(100);
    } catch (const Error&) {
      refused = true;
    }
  };
  config.callbacks = {look};
  train::launch_train_with_config(std::move(config), trainer);
  ASSERT_EQ(seen.size(), 6u);
  for (std::size_t i = 0; i < seen.size(); ++i) {
    EXPECT_EQ(seen[i].second, 7 + static_cast<std::int64_t>(i));
    EXPECT_EQ(seen[i].first, static_cast<std::uint64_t>(seen[i].second)) << "step " << i;
  }
  EXPECT_TRUE(refused);
  EXPECT_EQ(trainer.session().global_step(), 13u);
  trainer.session().set_global_step(5);  // its own again
  EXPECT_EQ(trainer.session().global_step(), 5u);
}

class StopAt : public callbacks::Callback {
 public:
  explicit StopAt(std::int64_t step) : step_(step) {}

 protected:
  void on_trigger_step() override {
    if (trainer().global_step() == step_) throw callbacks::StopTraining("enough");
  }

 private:
  std::int64_t step_;
};

TEST(Trainer, StopTrainingEndsTheLoopCleanly) {
  auto rec = std::make_shared<HookRecorder>();
  train::TrainConfig config = tiny_config(4, 10);
  config.callbacks = {std::make_shared<StopAt>(6), rec};
  train::SimpleTrainer trainer(device());
  EXPECT_NO_THROW(train::launch_train_with_config(std::move(config), trainer));
  EXPECT_EQ(trainer.global_step(), 6);
  EXPECT_EQ(rec->hooks.back(), "after_train@6");
}

class FailAt : public callbacks::Callback {
 public:
 protected:
  void on_trigger_step() override {
    if (trainer().global_step() == 3) throw Error(ErrorCode::invalid_argument, "callback failed on purpose");
  }
};

TEST(Trainer, RunsAfterTrainAndRethrowsAfterAnError) {
  auto rec = std::make_shared<HookRecorder>();
  train::TrainConfig config = tiny_config(4, 10);
  config.callbacks = {rec, std::make_shared<FailAt>()};
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "the error was swallowed";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("on purpose"), std::string::npos);
  }
  EXPECT_EQ(rec->hooks.back(), "after_train@3");
}

TEST(Trainer, NamesTheInputOfABadDatapoint) {
  std::vector<dataflow::Datapoint> batches = tiny_batches(3);
  batches[1][0] = Array(DType::f32, Shape{16, 5});  // x has 6 features
  train::TrainConfig config = tiny_config(3, 1);
  config.data = std::make_shared<train::FeedInput>(
      std::make_unique<dataflow::DataFromList>(std::move(batches), /*shuffle=*/false));
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "a [16, 5] batch trained a [?, 6] input";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("x"), std::string::npos) << what;
    EXPECT_NE(what.find("[16, 5]"), std::string::npos) << what;
  }
  EXPECT_EQ(trainer.global_step(), 1);
}

TEST(Trainer, TrainsAHandBuiltGraphThroughSetStep) {
  // Linear regression y = 3x - 1 without a ModelDesc.
  train::Trainer trainer(device());
  Graph& g = trainer.graph();
  const Tensor x = placeholder(g, "x", f32({kUnknown, 1}));
  const Tensor y = placeholder(g, "y", f32({kUnknown, 1}));
  const Tensor w = get_variable(g, "w", {1, 1}, zeros());
  const Tensor b = get_variable(g, "b", {1}, zeros());
  const Tensor err = matmul(x, w) + b - y;
  const Tensor cost = reduce_mean(err * err);
  Optimizer opt = sgd(g, 0.1f);
  const std::vector<Tensor> train_ops = opt.minimize(cost);

  std::vector<dataflow::Datapoint> batches;
  for (int k = 0; k < 4; ++k) {
    Array xs(DType::f32, Shape{8, 1}), ys(DType::f32, Shape{8, 1});
    for (int i = 0; i < 8; ++i) {
      xs.data<float>()[i] = static_cast<float>(k * 8 + i) / 16.0f - 1.0f;
      ys.data<float>()[i] = 3.0f * xs.data<float>()[i] - 1.0f;
    }
    batches.push_back({std::move(xs), std::move(ys)});
  }
  trainer.set_step({x, y}, std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(batches, false)),
                   train_ops, cost);
  train::TrainOptions o;
  o.max_epoch = 50;
  trainer.train(std::move(o));
  EXPECT_NEAR(trainer.session().variable("w").data<float>()[0], 3.0f, 0.02f);
  EXPECT_NEAR(trainer.session().variable("b").data<float>()[0], -1.0f, 0.02f);
  EXPECT_LT(trainer.last_cost(), 1e-3);
}

// A GAN-style trainer: each step runs the "critic" optimizer then the "generator" one,
// through run_hooked so that callbacks see the step's values once.
class AlternatingTrainer : public train::Trainer {
 public:
  using Trainer::Trainer;
  Tensor critic_op, generator_op, a, b, cost_a, cost_b;
  int critic_runs = 0, generator_runs = 0;

  void run_step() override {
    run_hooked({}, {}, {critic_op});
    ++critic_runs;
    run_hooked({}, {}, {generator_op});
    ++generator_runs;
  }
};

class CountFetches : public callbacks::Callback {
 public:
  explicit CountFetches(std::string name) : name_(std::move(name)) {}
  int values = 0;
  float last = NAN;

 protected:
  std::vector<Tensor> on_fetches() override { return {trainer().graph().find(name_)}; }
  void on_after_run(std::span<const Array> v) override {
    ++values;
    last = v[0].data<float>()[0];
  }

 private:
  std::string name_;
};

TEST(Trainer, RunsAStepOfItsOwnWithHookedFetches) {
  AlternatingTrainer trainer(device());
  Graph& g = trainer.graph();
  // Two players pulling scalars to their own targets: a -> 2, b -> -1.
  trainer.a = get_variable(g, "a", {1}, zeros());
  trainer.b = get_variable(g, "b", {1}, zeros());
  const Tensor two = scalar(g, 2.0f), minus_one = scalar(g, -1.0f);
  trainer.cost_a = identity(reduce_sum((trainer.a - two) * (trainer.a - two)), "cost_a");
  trainer.cost_b = identity(reduce_sum((trainer.b - minus_one) * (trainer.b - minus_one)), "cost_b");
  const Optimizer opt = sgd(g, 0.25f);
  trainer.critic_op = opt.apply_gradients({{gradients(trainer.cost_a, {trainer.a})[0], trainer.a}})[0];
  trainer.generator_op = opt.apply_gradients({{gradients(trainer.cost_b, {trainer.b})[0], trainer.b}})[0];
  auto counter = std::make_shared<CountFetches>("cost_a");
  train::TrainOptions o;
  o.callbacks = {counter};
  o.steps_per_epoch = 10;
  o.max_epoch = 2;
  trainer.train(std::move(o));
  EXPECT_EQ(trainer.critic_runs, 20);
  EXPECT_EQ(trainer.generator_runs, 20);
  EXPECT_EQ(counter->values, 20);  // once per step, not once per run
  EXPECT_NEAR(trainer.session().variable("a").data<float>()[0], 2.0f, 1e-4f);
  EXPECT_NEAR(trainer.session().variable("b").data<float>()[0], -1.0f, 1e-4f);
}

// A TrainConfig that cannot train is refused before the graph is built, naming the field.
TEST(TrainConfig, FieldsThatCannotTrainAreErrorsNamingThem) {
  struct Case {
    const char* field;
    void (*spoil)(train::TrainConfig&);
  };
  const Case cases[] = {
      {"steps_per_epoch", [](train::TrainConfig& c) { c.steps_per_epoch = -2; }},
      {"starting_epoch", [](train::TrainConfig& c) { c.starting_epoch = 0; }},
      {"max_epoch", [](train::TrainConfig& c) {
         c.starting_epoch = 5;
         c.max_epoch = 2;
       }},
      {"starting_global_step", [](train::TrainConfig& c) { c.starting_global_step = -7; }},
  };
  for (const Case& c : cases) {
    train::TrainConfig config = tiny_config(2, 2);
    c.spoil(config);
    train::SimpleTrainer trainer(device());
    try {
      train::launch_train_with_config(std::move(config), trainer);
      ADD_FAILURE() << c.field << ": accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("TrainConfig: ") + c.field), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace vkp::test
