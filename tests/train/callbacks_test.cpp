// Callbacks in real training runs of the tiny model: hyperparameter setters reach the
// device, periodic wrappers fire when they should, CheckNumerics names what went bad,
// InferenceRunner agrees with a predictor, MinSaver keeps the best checkpoint, and
// tensor callbacks see the step's values.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>

#include "callbacks/checkpoint.h"
#include "callbacks/inference_runner.h"
#include "callbacks/monitors.h"
#include "callbacks/param_setters.h"
#include "callbacks/periodic.h"
#include "callbacks/proxy.h"
#include "callbacks/saver.h"
#include "callbacks/summary.h"
#include "callbacks/tensor_callbacks.h"
#include "callbacks/trackers.h"
#include "core/error.h"
#include "core/log.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/ops.h"
#include "train/tower_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using callbacks::TrainerView;
using Interp = callbacks::ScheduledHyperParamSetter::Interpolation;

// Records the learning rate at the start of every epoch.
std::shared_ptr<callbacks::Callback> lr_recorder(std::vector<float>& out) {
  auto f = std::make_shared<Hooks>();
  f->before_epoch = [&out](TrainerView& t) { out.push_back(t.hyperparameter("learning_rate")); };
  return f;
}

std::vector<float> train_with(std::vector<callbacks::CallbackPtr> cbs, int epochs, std::size_t steps = 2) {
  std::vector<float> lrs;
  cbs.push_back(lr_recorder(lrs));
  train::TrainConfig config = tiny_config(steps, epochs);
  config.callbacks = std::move(cbs);
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  return lrs;
}

TEST(HyperParamSetters, ScheduleWithoutInterpolation) {
  auto s = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.2f}, {3, 0.02f}});
  EXPECT_EQ(train_with({s}, 4), (std::vector<float>{0.2f, 0.2f, 0.02f, 0.02f}));
}

TEST(HyperParamSetters, ScheduleWithLinearInterpolation) {
  auto s = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{2, 0.1f}, {4, 0.3f}}, Interp::linear);
  const std::vector<float> lrs = train_with({s}, 5);
  ASSERT_EQ(lrs.size(), 5u);
  EXPECT_FLOAT_EQ(lrs[0], 0.1f);  // before the first point: the model's own value
  EXPECT_FLOAT_EQ(lrs[1], 0.1f);
  EXPECT_FLOAT_EQ(lrs[2], 0.2f);
  EXPECT_FLOAT_EQ(lrs[3], 0.3f);
  EXPECT_FLOAT_EQ(lrs[4], 0.3f);
}

TEST(HyperParamSetters, StepBasedScheduleChangesWithinAnEpoch) {
  auto s = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{0, 0.0f}, {8, 0.8f}}, Interp::linear, true);
  std::vector<float> per_step;
  auto f = std::make_shared<Hooks>();
  f->before_run = [&per_step](TrainerView& t) { per_step.push_back(t.hyperparameter("learning_rate")); };
  train_with({s, f}, 2, 4);
  ASSERT_EQ(per_step.size(), 8u);
  for (std::size_t k = 0; k < 8; ++k) EXPECT_NEAR(per_step[k], 0.1f * static_cast<float>(k), 1e-6f) << "step " << k;
}

// Set before every step from the global step: a ramp of 3 steps to 0.6, then a half
// cosine down to 0.1 at step 7, flat after; the values computed here from the formula.
TEST(HyperParamSetters, WarmupCosineRampsThenDecays) {
  auto s = std::make_shared<callbacks::WarmupCosineSchedule>("learning_rate", 0.6f, 3, 7, 0.1f);
  std::vector<float> per_step;
  auto f = std::make_shared<Hooks>();
  f->before_run = [&per_step](TrainerView& t) { per_step.push_back(t.hyperparameter("learning_rate")); };
  train_with({s, f}, 3, 3);
  ASSERT_EQ(per_step.size(), 9u);
  for (std::size_t k = 0; k < 9; ++k) {
    const double step = static_cast<double>(k);
    const double want = k < 3 ? 0.6 * (step + 1) / 3
                              : 0.1 + 0.5 * 0.5 * (1 + std::cos(M_PI * std::min(1.0, (step - 3) / 4)));
    EXPECT_NEAR(per_step[k], want, 1e-6) << "step " << k;
  }
  EXPECT_THROW(callbacks::WarmupCosineSchedule("learning_rate", 0.1f, 5, 5), Error);
}

TEST(HyperParamSetters, WithFuncHalvesEveryEpoch) {
  auto s = std::make_shared<callbacks::HyperParamSetterWithFunc>("learning_rate",
                                                                 [](int, float current) { return current * 0.5f; });
  EXPECT_EQ(train_with({s}, 3), (std::vector<float>{0.05f, 0.025f, 0.0125f}));
}

TEST(HyperParamSetters, StatMonitorReducesOnAPlateau) {
  // The statistic falls once, then stays: with last_k = 2 the setter halves after epoch
  // 4 (two epochs without gain) and again three epochs later.
  const double stat[] = {1.0, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5};
  auto f = std::make_shared<Hooks>();
  f->trigger_epoch = [&stat](TrainerView& t) { t.monitors().put_scalar("val", stat[t.epoch_num() - 1]); };
  auto s = std::make_shared<callbacks::StatMonitorParamSetter>("learning_rate", "val",
                                                               [](float v) { return v * 0.5f; }, 0.01, 2);
  EXPECT_EQ(train_with({f, s}, 7),
            (std::vector<float>{0.1f, 0.1f, 0.1f, 0.1f, 0.05f, 0.05f, 0.05f}));
}

TEST(HyperParamSetters, AZeroLearningRateFreezesTheVariables) {
  // The value reaches the update kernels: with momentum, lr 0 leaves variables as they are.
  auto s = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.1f}, {2, 0.0f}});
  std::vector<Array> weights;
  auto f = std::make_shared<Hooks>();
  f->before_epoch = [&weights](TrainerView& t) { weights.push_back(t.variable("fc1/W")); };
  f->after_train = [&weights](TrainerView& t) { weights.push_back(t.variable("fc1/W")); };
  train_with({s, f}, 3);
  ASSERT_EQ(weights.size(), 4u);
  EXPECT_NE(0, std::memcmp(weights[0].bytes().data(), weights[1].bytes().data(), weights[0].nbytes()));
  EXPECT_EQ(0, std::memcmp(weights[1].bytes().data(), weights[3].bytes().data(), weights[1].nbytes()));
}

TEST(HyperParamSetters, UnknownHyperparameterIsNamed) {
  auto s = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rte", std::vector<std::pair<std::int64_t, float>>{{1, 0.2f}});
  try {
    train_with({s}, 1);
    FAIL() << "a misspelt hyperparameter was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("learning_rte"), std::string::npos) << e.what();
  }
}

class CountTriggers : public callbacks::Callback {
 public:
  std::vector<std::int64_t> at;

 protected:
  void on_trigger() override { at.push_back(trainer().global_step()); }
};

TEST(Periodic, TriggerEveryKStepsAndEpochs) {
  auto by_step = std::make_shared<CountTriggers>();
  auto by_epoch = std::make_shared<CountTriggers>();
  train_with({std::make_shared<callbacks::PeriodicTrigger>(by_step, 3),
              std::make_shared<callbacks::PeriodicTrigger>(by_epoch, 0, 2, /*before_train=*/true)},
             4, 2);
  EXPECT_EQ(by_step->at, (std::vector<std::int64_t>{3, 6}));
  EXPECT_EQ(by_epoch->at, (std::vector<std::int64_t>{0, 4, 8}));
}

TEST(Periodic, PeriodicTriggerRunsARealSaver) {
  // Savers act on trigger(): every 3 steps of 2-step epochs saves at step 3 only, inside
  // epoch 2, so the checkpoint records 1 completed epoch.
  const std::string dir = temp_dir("periodic-saver");
  train::TrainConfig config = tiny_config(2, 2);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::PeriodicTrigger>(std::make_shared<callbacks::ModelSaver>(), 3)};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(callbacks::latest_checkpoint(dir), dir + "/model-3.safetensors");
  EXPECT_EQ(callbacks::load_checkpoint(dir + "/model-3.safetensors").info.epoch, 1);
  EXPECT_EQ(callbacks::load_checkpoint(dir + "/model-3.safetensors").info.local_step, 1) << "1 step of epoch 2";
  EXPECT_FALSE(std::filesystem::exists(dir + "/model-4.safetensors"));
  std::filesystem::remove_all(dir);
}

// A saver run before training (PeriodicTrigger's before_train) records the epochs done
// and no step inside one: 0 for a fresh run.
TEST(Periodic, ASaverBeforeTrainingRecordsTheEpochsDone) {
  const std::string dir = temp_dir("periodic-saver-before");
  train::TrainConfig config = tiny_config(2, 1);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::PeriodicTrigger>(std::make_shared<callbacks::ModelSaver>(), 0, 1,
                                                                   /*before_train=*/true)};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  const callbacks::CheckpointInfo before = callbacks::load_checkpoint(dir + "/model-0.safetensors").info;
  EXPECT_EQ(before.epoch, 0);
  EXPECT_EQ(before.local_step, 0);
  const callbacks::CheckpointInfo after = callbacks::load_checkpoint(dir + "/model-2.safetensors").info;
  EXPECT_EQ(after.epoch, 1);
  EXPECT_EQ(after.local_step, 0);
  std::filesystem::remove_all(dir);
}

TEST(Periodic, EnableCallbackIfPassesBeforeTrainAndSeesTheEpochsDone) {
  std::vector<int> seen;
  train::TrainConfig config = tiny_config(2, 2);
  config.starting_epoch = 2;
  config.max_epoch = 3;
  auto record = std::make_shared<callbacks::CallbackFactory>(callbacks::CallbackFunctions{
      .before_train = [&seen](TrainerView& t) { seen.push_back(t.epoch_num()); }});
  config.callbacks = {std::make_shared<callbacks::EnableCallbackIf>(record, [](const TrainerView&) { return false; })};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(seen, std::vector<int>{1});  // before_train always runs, after epoch 1 of a resumed run
}

TEST(Periodic, EnableCallbackIfAndPeriodicCallback) {
  auto odd = std::make_shared<CountTriggers>();
  auto every3 = std::make_shared<CountTriggers>();
  train_with({std::make_shared<callbacks::EnableCallbackIf>(
                  odd, [](const TrainerView& t) { return t.epoch_num() % 2 == 1; }),
              std::make_shared<callbacks::PeriodicCallback>(every3, 3)},
             5, 2);
  EXPECT_EQ(odd->at, (std::vector<std::int64_t>{2, 6, 10}));
  EXPECT_EQ(every3->at, (std::vector<std::int64_t>{6}));  // epoch 3 of 5, as tensorpack
}

TEST(CheckNumerics, NamesTheCostAndTheStep) {
  // A NaN bias after the last relu makes the next step's cost NaN.
  train::TrainConfig config = tiny_config(2, 3);
  train::SimpleTrainer trainer(device());
  auto poison = std::make_shared<Hooks>();
  poison->trigger_step = [&trainer](TrainerView& t) {
    if (t.global_step() != 3) return;
    Array b = t.variable("fc1/b");
    b.data<float>()[1] = std::nanf("");
    trainer.session().set_variable("fc1/b", b);
  };
  config.callbacks = {poison, std::make_shared<callbacks::CheckNumerics>()};
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "a NaN cost went unnoticed";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("cost"), std::string::npos) << what;
    EXPECT_NE(what.find("global step 4"), std::string::npos) << what;
  }
}

TEST(CheckNumerics, NamesTheVariableAndTheStep) {
  // A NaN input: relu hides it from the cost, but the gradients carry it into the
  // first layer's variables, which a period of 1 checks after every step.
  std::vector<dataflow::Datapoint> batches = tiny_batches(4);
  batches[2][0].data<float>()[5] = std::nanf("");
  train::TrainConfig config = tiny_config(4, 1);
  config.data = std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(batches, false));
  config.callbacks = {std::make_shared<callbacks::CheckNumerics>(1)};
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "a NaN input trained on";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("variable fc0/"), std::string::npos) << what;
    EXPECT_NE(what.find("global step 3"), std::string::npos) << what;
  }
}

TEST(InferenceRunner, AgreesWithThePredictor) {
  train::TrainConfig config = tiny_config(4, 2);
  config.callbacks = {std::make_shared<callbacks::InferenceRunner>(
      tiny_flow(3, 10, 99), std::vector<callbacks::InferencerPtr>{
                                std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"cost", "accuracy"}),
                                std::make_shared<callbacks::ClassificationError>()})};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);

  const callbacks::PredictFn predict = trainer.predictor({"x", "label"}, {"cost", "incorrect_vector"});
  double cost = 0, wrong = 0;
  for (const dataflow::Datapoint& dp : tiny_batches(3, 10, 99)) {
    const std::vector<Array> out = predict({dp[0], dp[1]});
    cost += out[0].data<float>()[0] / 3.0;
    for (int i = 0; i < 10; ++i) wrong += out[1].data<float>()[i] / 30.0;
  }
  const callbacks::Monitors& m = trainer.monitors();
  EXPECT_NEAR(m.get_latest("validation_cost"), cost, 1e-5);
  EXPECT_NEAR(m.get_latest("validation_error"), wrong, 1e-9);
  EXPECT_NEAR(m.get_latest("validation_accuracy"), 1.0 - wrong, 1e-5);
  EXPECT_EQ(m.get_history("validation_cost").size(), 2u);
}

// Counted by hand: over two batches, 3 true positives, 5 predicted positives, 4 positives.
TEST(InferenceRunner, BinaryClassificationStatsGivesPrecisionAndRecall) {
  callbacks::BinaryClassificationStats stats("prediction", "label", "test");
  EXPECT_EQ(stats.names(), (std::vector<std::string>{"prediction", "label"}));
  stats.before_inference();
  const Array p1 = Array::from(Shape{4}, std::vector<std::int32_t>{1, 1, 0, 1}),
              l1 = Array::from(Shape{4}, std::vector<float>{1, 0, 0, 1});
  const Array p2 = Array::from(Shape{3}, std::vector<float>{0.5f, 1, 0}),
              l2 = Array::from(Shape{3}, std::vector<std::int32_t>{1, 0, 1});
  stats.on_batch(std::vector<Array>{p1, l1}, 4);
  stats.on_batch(std::vector<Array>{p2, l2}, 3);
  std::map<std::string, double> got = stats.after_inference();
  EXPECT_DOUBLE_EQ(got.at("test_precision"), 3.0 / 5.0);
  EXPECT_DOUBLE_EQ(got.at("test_recall"), 3.0 / 4.0);
  stats.before_inference();  // the next epoch starts from nothing: no positives at all
  stats.on_batch(std::vector<Array>{Array::from(Shape{2}, std::vector<float>{0, 0}),
                                    Array::from(Shape{2}, std::vector<float>{0, 0})},
                 2);
  got = stats.after_inference();
  EXPECT_EQ(got.at("test_precision"), 0.0);
  EXPECT_EQ(got.at("test_recall"), 0.0);
  EXPECT_THROW(stats.on_batch(std::vector<Array>{p1, l2}, 4), Error) << "4 predictions, 3 labels";
}

TEST(Savers, MinSaverKeepsTheBestEpoch) {
  const std::string dir = temp_dir("minsaver");
  const double stat[] = {0.5, 0.3, 0.4};
  auto f = std::make_shared<Hooks>();
  f->trigger_epoch = [&stat](TrainerView& t) { t.monitors().put_scalar("val", stat[t.epoch_num() - 1]); };
  train::TrainConfig config = tiny_config(2, 3);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::ModelSaver>(2), f,
                      std::make_shared<callbacks::MinSaver>("val")};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);

  const callbacks::Checkpoint best = callbacks::load_checkpoint(dir + "/min-val.safetensors");
  EXPECT_EQ(best.info.epoch, 2);
  EXPECT_EQ(best.info.global_step, 4);
  const callbacks::Checkpoint two = callbacks::load_checkpoint(dir + "/model-4.safetensors");
  const Array& a = best.variables.at("fc1/W");
  const Array& b = two.variables.at("fc1/W");
  EXPECT_EQ(0, std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()));
  EXPECT_FALSE(std::filesystem::exists(dir + "/model-2.safetensors"));  // max_to_keep 2
  EXPECT_TRUE(std::filesystem::exists(dir + "/model-6.safetensors"));
  std::filesystem::remove_all(dir);
}

// A statistic that is NaN or infinite never wins: neither as the first epoch's (no best
// yet) nor after a finite one. Both orders of min and max.
TEST(Savers, NonFiniteStatisticsAreNeverTheBest) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  struct Case {
    std::vector<double> stat;
    bool max;
    int best_epoch;  // 0: no best file at all
  };
  const Case cases[] = {{{nan, 0.4, nan}, false, 2}, {{0.5, nan, -inf}, false, 1}, {{0.5, inf, nan}, true, 1},
                        {{nan, nan, nan}, true, 0}};
  for (const Case& c : cases) {
    const std::string dir = temp_dir("nonfinite-saver");
    auto f = std::make_shared<Hooks>();
    f->trigger_epoch = [&c](TrainerView& t) { t.monitors().put_scalar("val", c.stat[static_cast<std::size_t>(t.epoch_num() - 1)]); };
    train::TrainConfig config = tiny_config(2, 3);
    config.logger_dir = dir;
    config.callbacks = {std::make_shared<callbacks::ModelSaver>(5), f,
                        std::make_shared<callbacks::MinSaver>("val", /*reverse=*/c.max)};
    train::SimpleTrainer trainer(device());
    train::launch_train_with_config(std::move(config), trainer);
    const std::string best = dir + (c.max ? "/max-val.safetensors" : "/min-val.safetensors");
    if (c.best_epoch == 0) {
      EXPECT_FALSE(std::filesystem::exists(best));
    } else {
      ASSERT_TRUE(std::filesystem::exists(best));
      EXPECT_EQ(callbacks::load_checkpoint(best).info.epoch, c.best_epoch);
    }
    std::filesystem::remove_all(dir);
  }
}

TEST(TensorCallbacks, ProcessTensorsSeesTheStepsCost) {
  std::vector<float> seen, costs;
  train::TrainConfig config = tiny_config(3, 2);
  train::SimpleTrainer trainer(device());
  auto f = std::make_shared<Hooks>();
  f->trigger_step = [&costs, &trainer](TrainerView&) { costs.push_back(static_cast<float>(trainer.last_cost())); };
  config.callbacks = {std::make_shared<callbacks::ProcessTensors>(
                          std::vector<std::string>{"cost"},
                          [&seen](std::span<const Array> v) { seen.push_back(v[0].data<float>()[0]); }),
                      f};
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen, costs);
}

TEST(TensorCallbacks, RunOpRunsItsTargets) {
  // RunOp resets fc1/b to zeros at every epoch's end: the final bias is zero.
  train::TrainConfig config = tiny_config(2, 2);
  config.callbacks = {std::make_shared<callbacks::RunOp>(
      [](graph::Graph& g) {
        const graph::Tensor b = g.find_variable("fc1/b");
        return std::vector<graph::Tensor>{graph::assign(b, graph::scalar(g, 0.0f) * b)};
      },
      /*run_before=*/false)};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  const Array b = trainer.session().variable("fc1/b");
  for (int i = 0; i < 3; ++i) EXPECT_EQ(b.data<float>()[i], 0.0f);
}

TEST(MovingAverageSummary, IsTheBiasCorrectedAverageOfTheStepsCosts) {
  // Host reference: e = d * e + (1 - d) * c_i from 0, divided by 1 - d^n at each epoch end.
  std::vector<double> costs, expected;
  train::TrainConfig config = tiny_config(3, 2);
  train::SimpleTrainer trainer(device());
  auto record = std::make_shared<Hooks>();
  record->trigger_step = [&](TrainerView&) { costs.push_back(trainer.last_cost()); };
  record->trigger_epoch = [&](TrainerView&) {
    double e = 0;
    for (double c : costs) e = 0.95 * e + 0.05 * c;
    expected.push_back(e / (1 - std::pow(0.95, static_cast<double>(costs.size()))));
  };
  config.callbacks = {record, std::make_shared<callbacks::MovingAverageSummary>()};
  train::launch_train_with_config(std::move(config), trainer);
  const auto& history = trainer.monitors().get_history("cost");
  ASSERT_EQ(history.size(), 2u);
  for (std::size_t e = 0; e < 2; ++e) EXPECT_NEAR(history[e].second, expected[e], 1e-5 * expected[e]) << "epoch " << e + 1;
  EXPECT_TRUE(trainer.graph().find_variable("cost/EMA").valid());
}

TEST(Trackers, PutThroughputAndPeakMemory) {
  train::TrainConfig config = tiny_config(3, 2);
  config.callbacks = {std::make_shared<callbacks::ThroughputTracker>(),
                      std::make_shared<callbacks::PeakMemoryTracker>()};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  const callbacks::Monitors& m = trainer.monitors();
  EXPECT_GT(m.get_latest("Throughput (steps/sec)"), 0.0);
  EXPECT_NEAR(m.get_latest("Throughput (samples/sec)") / m.get_latest("Throughput (steps/sec)"), 16.0, 1e-6);
  EXPECT_GE(m.get_latest("PeakMemory(MB)") * (1 << 20), static_cast<double>(trainer.device_memory_bytes()));
  EXPECT_EQ(m.get_history("PeakMemory(MB)").size(), 2u);
}

// A group runs its members as one: each gets the values of its own fetches.
TEST(Callbacks, AGroupHandsEachMemberItsOwnValues) {
  std::vector<float> costs, accuracies, seen_costs;
  train::TrainConfig config = tiny_config(3, 2);
  train::SimpleTrainer trainer(device());
  auto record = std::make_shared<Hooks>();
  record->trigger_step = [&](TrainerView&) { seen_costs.push_back(static_cast<float>(trainer.last_cost())); };
  auto recorder = std::make_shared<HookRecorder>();
  config.callbacks = {std::make_shared<callbacks::Callbacks>(std::vector<callbacks::CallbackPtr>{
      std::make_shared<callbacks::ProcessTensors>(
          std::vector<std::string>{"accuracy"}, [&](std::span<const Array> v) { accuracies.push_back(v[0].data<float>()[0]); }),
      recorder,
      std::make_shared<callbacks::ProcessTensors>(std::vector<std::string>{"cost"},
                                                  [&](std::span<const Array> v) { costs.push_back(v[0].data<float>()[0]); }),
      record})};
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(costs, seen_costs);
  EXPECT_EQ(accuracies.size(), 6u);
  for (float a : accuracies) EXPECT_TRUE(a >= 0.0f && a <= 1.0f) << a;
  EXPECT_EQ(std::count(recorder->hooks.begin(), recorder->hooks.end(), "trigger_step@6"), 1);
  EXPECT_EQ(recorder->hooks.front(), "setup_graph@0");
  EXPECT_EQ(recorder->hooks.back(), "after_train@6");
  EXPECT_THROW(callbacks::Callbacks({nullptr}), Error);
  EXPECT_THROW(callbacks::ProxyCallback(nullptr), Error);
}

// The mean of the last `window` (3) steps' costs, after steps 3 and 6 of 7 (epochs of 7
// steps, which a window does not divide: the windows run across them).
TEST(SimpleMovingAverage, IsTheMeanOfTheLastWindowOfSteps) {
  std::vector<double> costs, expected;
  train::TrainConfig config = tiny_config(7, 1);
  train::SimpleTrainer trainer(device());
  auto record = std::make_shared<Hooks>();
  record->trigger_step = [&](TrainerView& t) {
    costs.push_back(static_cast<float>(trainer.last_cost()));
    if (t.global_step() % 3 == 0) expected.push_back((costs.end()[-1] + costs.end()[-2] + costs.end()[-3]) / 3);
  };
  config.callbacks = {record, std::make_shared<callbacks::SimpleMovingAverage>(std::vector<std::string>{"cost"}, 3)};
  train::launch_train_with_config(std::move(config), trainer);
  const auto& history = trainer.monitors().get_history("cost/SMA");
  ASSERT_EQ(history.size(), 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(history[i].first, static_cast<std::int64_t>(3 * (i + 1)));
    EXPECT_NEAR(history[i].second, expected[i], 1e-6) << "after step " << 3 * (i + 1);
  }
  EXPECT_THROW(callbacks::SimpleMovingAverage({"cost"}, 0), Error);
}

// The values of the named tensors in the log after every step, as the step computed them.
TEST(TensorPrinter, LogsEveryStepsValues) {
  std::vector<std::string> lines;
  const int sink = logger().add_sink([&lines](LogLevel, std::string_view line) {
    if (line.find("TensorPrinter") != std::string_view::npos) lines.emplace_back(line);
  });
  std::vector<float> costs;
  train::TrainConfig config = tiny_config(2, 1);
  train::SimpleTrainer trainer(device());
  auto record = std::make_shared<Hooks>();
  record->trigger_step = [&](TrainerView&) { costs.push_back(static_cast<float>(trainer.last_cost())); };
  config.callbacks = {std::make_shared<callbacks::TensorPrinter>(std::vector<std::string>{"cost", "logits"}), record};
  train::launch_train_with_config(std::move(config), trainer);
  logger().remove_sink(sink);
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_NE(lines[0].find("at step 1: cost: " + fmt::format("{:.6g}", costs[0])), std::string::npos) << lines[0];
  EXPECT_NE(lines[1].find("at step 1: logits: [16, 3] "), std::string::npos) << lines[1];
  EXPECT_NE(lines[1].find("... (48 values)"), std::string::npos) << lines[1];
  EXPECT_NE(lines[2].find("at step 2: cost: " + fmt::format("{:.6g}", costs[1])), std::string::npos) << lines[2];
}

// This process's resident memory as /proc/self/statm counts it, before training and
// after every epoch.
TEST(Trackers, HostMemoryTrackerPutsThisProcesssMemory) {
  train::TrainConfig config = tiny_config(2, 2);
  config.callbacks = {std::make_shared<callbacks::HostMemoryTracker>()};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  std::ifstream statm("/proc/self/statm");
  double pages = 0, resident = 0;
  ASSERT_TRUE(statm >> pages >> resident);
  const double rss_mb = resident * static_cast<double>(sysconf(_SC_PAGESIZE)) / (1 << 20);
  const callbacks::Monitors& m = trainer.monitors();
  EXPECT_EQ(m.get_history("HostMemory/rss(MB)").size(), 3u);  // before training, two epochs
  EXPECT_GT(m.get_latest("HostMemory/rss(MB)"), 0.5 * rss_mb);
  EXPECT_LT(m.get_latest("HostMemory/rss(MB)"), 2.0 * rss_mb);
  EXPECT_GE(m.get_latest("HostMemory/peak_rss(MB)"), m.get_latest("HostMemory/rss(MB)"));
  EXPECT_GT(m.get_latest("HostMemory/available(GB)"), 0.0);
}

// The learning rate a person writes into <logdir>/hyper.txt, read as each epoch begins;
// a line that is no number leaves it as it was.
TEST(HyperParamSetters, HumanHyperParamSetterReadsTheFileAtEachEpoch) {
  const std::string dir = temp_dir("human-setter");
  const auto write = [&dir](const std::string& text) { std::ofstream(dir + "/hyper.txt") << text; };
  write("momentum:0.5\nlearning_rate:0.01\n  learning_rate:0.05\n");  // the last line for it decides
  std::vector<float> lrs;
  auto rewrite = std::make_shared<Hooks>();
  rewrite->trigger_epoch = [&](TrainerView& t) {
    if (t.epoch_num() == 1) write("learning_rate: 0.02\n");
    if (t.epoch_num() == 2) write("learning_rate:0.0x2\n");
    if (t.epoch_num() == 3) std::filesystem::remove(dir + "/hyper.txt");
  };
  train::TrainConfig config = tiny_config(2, 4);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::HumanHyperParamSetter>("learning_rate"), rewrite, lr_recorder(lrs)};
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(lrs, (std::vector<float>{0.05f, 0.02f, 0.02f, 0.02f}));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
