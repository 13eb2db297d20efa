// Work beside the training loop: a NoOpTrainer, whose steps run only the callbacks, and
// StartProcOrThread's threads and programs, started before training and stopped after it.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>

#include "callbacks/concurrency.h"
#include "callbacks/tensor_callbacks.h"
#include "core/error.h"
#include "engine/graph/ops.h"
#include "train/trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using callbacks::TrainerView;

// tensorpack's NoOpTrainer: the loop, counters and callbacks (fetches included) with no
// training step and no input.
TEST(Callbacks, ANoOpTrainerRunsOnlyTheCallbacks) {
  train::NoOpTrainer trainer(device());
  const Array three = Array::from(Shape{2}, std::vector<float>{3, 4});
  graph::identity(graph::constant(trainer.graph(), three), "three");
  auto hooks = std::make_shared<Hooks>();
  int steps = 0, epochs = 0;
  hooks->trigger_step = [&steps](TrainerView&) { ++steps; };
  hooks->trigger_epoch = [&epochs](TrainerView&) { ++epochs; };
  std::vector<float> fetched;
  auto fetch = std::make_shared<callbacks::ProcessTensors>(
      std::vector<std::string>{"three"},
      [&fetched](std::span<const Array> v) { fetched.push_back(v[0].data<float>()[1]); });
  train::TrainOptions options;
  options.callbacks = {hooks, fetch};
  options.steps_per_epoch = 3;
  options.max_epoch = 2;
  trainer.train(options);
  EXPECT_EQ(steps, 6);
  EXPECT_EQ(epochs, 2);
  EXPECT_EQ(trainer.global_step(), 6);
  EXPECT_EQ(fetched, std::vector<float>(6, 4.0f)) << "the callbacks' fetches run every step";
}

// A callback with epoch fetches only (ParamHistograms-like) gets them with each epoch's
// last step of a NoOpTrainer too.
TEST(Callbacks, ANoOpTrainerRunsTheEpochFetches) {
  class EpochFetch : public callbacks::Callback {
   public:
    int seen = 0;

   protected:
    std::vector<graph::Tensor> on_epoch_fetches() override { return {trainer().graph().find("three")}; }
    void on_after_epoch_run(std::span<const Array> values) override { seen += values[0].data<float>()[0] == 3.0f; }
  };
  train::NoOpTrainer trainer(device());
  graph::identity(graph::constant(trainer.graph(), Array::from(Shape{1}, std::vector<float>{3})), "three");
  auto fetch = std::make_shared<EpochFetch>();
  train::TrainOptions options;
  options.callbacks = {fetch};
  options.steps_per_epoch = 2;
  options.max_epoch = 3;
  trainer.train(options);
  EXPECT_EQ(fetch->seen, 3) << "once an epoch";
}

// Threads and programs that run beside training and end with it.
TEST(Callbacks, StartProcOrThreadStopsWhatItStartedWhenTrainingEnds) {
  std::atomic<int> ticks{0};
  std::atomic<bool> running_during_training{false};
  auto started = std::make_shared<callbacks::StartProcOrThread>(
      std::vector<callbacks::StartProcOrThread::ThreadFn>{[&ticks](std::stop_token stop) {
        while (!stop.stop_requested()) {
          ++ticks;
          std::this_thread::sleep_for(std::chrono::milliseconds(1));
        }
      }},
      std::vector<std::vector<std::string>>{{"sleep", "30"}});
  auto hooks = std::make_shared<Hooks>();
  hooks->trigger_epoch = [&](TrainerView&) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    running_during_training = ticks > 0 && kill(started->pids().at(0), 0) == 0;
  };
  train::NoOpTrainer trainer(device());
  train::TrainOptions options;
  options.callbacks = {started, hooks};
  options.steps_per_epoch = 2;
  options.max_epoch = 1;
  trainer.train(options);
  EXPECT_TRUE(running_during_training) << "the thread ticked and the program ran while training did";
  const int after = ticks;
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_EQ(ticks, after) << "the thread was stopped and joined";
  ASSERT_EQ(started->exit_statuses().size(), 1u);
  EXPECT_TRUE(WIFSIGNALED(started->exit_statuses()[0]) && WTERMSIG(started->exit_statuses()[0]) == SIGTERM)
      << "sleep 30 was terminated, not left running";

  // A program that ignores SIGTERM is killed after the grace period; a callback left to
  // finish asks its threads to stop when it goes, rather than waiting for ever.
  const std::string ready = temp_dir("stubborn") + "/ready";  // the program ignores SIGTERM from then on
  auto stubborn = std::make_shared<callbacks::StartProcOrThread>(
      std::vector<callbacks::StartProcOrThread::ThreadFn>{},
      std::vector<std::vector<std::string>>{{"sh", "-c", "trap '' TERM; touch " + ready + "; exec sleep 30"}}, true,
      std::chrono::milliseconds(200));
  auto wait_ready = std::make_shared<Hooks>();
  wait_ready->before_epoch = [&ready](TrainerView&) {
    for (int i = 0; i < 500 && !std::filesystem::exists(ready); ++i)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
  };
  auto left = std::make_shared<callbacks::StartProcOrThread>(
      std::vector<callbacks::StartProcOrThread::ThreadFn>{[](std::stop_token stop) {
        while (!stop.stop_requested()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      }},
      std::vector<std::vector<std::string>>{}, false);
  options.callbacks = {stubborn, left, wait_ready};
  train::NoOpTrainer second(device());
  const auto begun = std::chrono::steady_clock::now();
  second.train(options);
  EXPECT_LT(std::chrono::steady_clock::now() - begun, std::chrono::seconds(10)) << "not the program's 30 s";
  EXPECT_TRUE(WIFSIGNALED(stubborn->exit_statuses()[0]) && WTERMSIG(stubborn->exit_statuses()[0]) == SIGKILL);
  options.callbacks.clear();
  left.reset();  // returns: its thread was asked to stop
  std::filesystem::remove_all(std::filesystem::path(ready).parent_path());

  auto missing =
      std::make_shared<callbacks::StartProcOrThread>(std::vector<callbacks::StartProcOrThread::ThreadFn>{},
                                                     std::vector<std::vector<std::string>>{{"vkpack-no-such-program"}});
  options.callbacks = {missing};
  train::NoOpTrainer again(device());
  try {
    again.train(options);
    FAIL() << "a program that does not exist started";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("cannot start 'vkpack-no-such-program'"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
