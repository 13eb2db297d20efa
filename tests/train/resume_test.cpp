// A run that crashes and is resumed with AutoResumeTrainConfig ends bit for bit where an
// uninterrupted run ends: variables, optimizer slots, moving averages, global step,
// hyperparameters and dropout masks all come back; stats.json keeps the epochs before
// the crash and appends the rest, and they are the Monitors' history again, so a MaxSaver
// keeps the earlier run's best.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/checkpoint.h"
#include "callbacks/monitors/json_writer.h"
#include "callbacks/param_setters.h"
#include "callbacks/periodic.h"
#include "callbacks/saver.h"
#include "callbacks/summary.h"
#include "core/error.h"
#include "core/log.h"
#include "dataflow/multi_thread_runner.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

train::TrainConfig config_for(const std::string& dir, int epochs, std::vector<callbacks::CallbackPtr> extra = {}) {
  train::TrainConfig config = tiny_config(3, epochs);
  config.model = std::make_shared<TinyAdamModel>();
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::ModelSaver>(3),
                      std::make_shared<callbacks::ScheduledHyperParamSetter>(
                          "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.02f}, {3, 0.005f}})};
  config.callbacks.push_back(std::make_shared<callbacks::MovingAverageSummary>());
  for (auto& cb : extra) config.callbacks.push_back(cb);
  config.monitors = std::vector<callbacks::MonitorPtr>{std::make_shared<callbacks::JSONWriter>()};
  return config;
}

TEST(Resume, CrashedAndResumedRunEqualsAnUninterruptedOne) {
  const std::string a = temp_dir("resume-a"), b = temp_dir("resume-b");
  train::SimpleTrainer whole(device(), 11);
  train::launch_train_with_config(config_for(a, 4), whole);

  {  // crashes in epoch 3, after epoch 2's checkpoint
    train::SimpleTrainer first(device(), 11);
    EXPECT_THROW(train::launch_train_with_config(config_for(b, 4, {std::make_shared<CrashAt>(8)}), first), Error);
  }
  train::TrainConfig resumed_config = train::AutoResumeTrainConfig(config_for(b, 4));
  EXPECT_EQ(resumed_config.starting_epoch, 3);
  EXPECT_EQ(resumed_config.starting_global_step, 6);
  // The same seed, as a restarted script has: dropout masks derive from it and the global
  // step. A variable the checkpoint failed to set would keep its initial value.
  train::SimpleTrainer resumed(device(), 11);
  train::launch_train_with_config(std::move(resumed_config), resumed);

  EXPECT_EQ(resumed.global_step(), whole.global_step());
  EXPECT_EQ(resumed.session().hyperparameter("learning_rate"), whole.session().hyperparameter("learning_rate"));
  const auto expected = all_variables(whole), got = all_variables(resumed);
  ASSERT_EQ(expected.size(), got.size());
  for (const auto& [name, value] : expected) {
    const Array& other = got.at(name);
    EXPECT_EQ(0, std::memcmp(value.bytes().data(), other.bytes().data(), value.nbytes())) << name;
  }

  std::ifstream in(b + "/stats.json"), whole_in(a + "/stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in), whole_stats = nlohmann::json::parse(whole_in);
  ASSERT_EQ(stats.size(), 4u);
  for (int e = 0; e < 4; ++e) {
    EXPECT_EQ(stats[e].at("epoch_num"), e + 1);
    EXPECT_EQ(stats[e].at("global_step"), 3 * (e + 1));
    EXPECT_TRUE(stats[e].contains("cost"));  // the moving average of the cost
  }
  // Moving averages live in checkpointed variables: the statistics match too.
  EXPECT_EQ(stats, whole_stats);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

// A checkpoint made inside an epoch (a ModelSaver under PeriodicTrigger every 2 steps,
// beside the one at every epoch's end) resumes with the rest of that epoch: the crash
// after global step 8 leaves model-8 (epoch 2 done, 2 of epoch 3's 3 steps), and the
// resumed run trains step 9 as the end of epoch 3, then epoch 4, ending bit for bit
// where the uninterrupted run does, statistics included (a resume that trained epoch 3
// in full again would end at step 14).
TEST(Resume, ACheckpointMadeInsideAnEpochResumesWithTheRestOfIt) {
  const std::string a = temp_dir("resume-mid-a"), b = temp_dir("resume-mid-b");
  auto every_2_steps = [] {
    return std::make_shared<callbacks::PeriodicTrigger>(std::make_shared<callbacks::ModelSaver>(0), 2);
  };
  train::SimpleTrainer whole(device(), 11);
  train::launch_train_with_config(config_for(a, 4, {every_2_steps()}), whole);
  {
    train::SimpleTrainer first(device(), 11);
    EXPECT_THROW(
        train::launch_train_with_config(config_for(b, 4, {every_2_steps(), std::make_shared<CrashAt>(8)}), first),
        Error);
  }
  const callbacks::Checkpoint saved = callbacks::load_checkpoint(b + "/model-8.safetensors");
  EXPECT_EQ(saved.info.epoch, 2);
  EXPECT_EQ(saved.info.local_step, 2);
  EXPECT_EQ(callbacks::load_checkpoint(b + "/model-6.safetensors").info.local_step, 0) << "an epoch's end";
  train::TrainConfig resumed_config = train::AutoResumeTrainConfig(config_for(b, 4, {every_2_steps()}));
  EXPECT_EQ(resumed_config.starting_epoch, 3);
  EXPECT_EQ(resumed_config.starting_global_step, 8);
  EXPECT_EQ(resumed_config.starting_local_step, 2);
  train::SimpleTrainer resumed(device(), 11);
  train::launch_train_with_config(std::move(resumed_config), resumed);

  EXPECT_EQ(resumed.global_step(), 12);
  EXPECT_EQ(resumed.global_step(), whole.global_step());
  const auto expected = all_variables(whole), got = all_variables(resumed);
  ASSERT_EQ(expected.size(), got.size());
  for (const auto& [name, value] : expected)
    EXPECT_EQ(0, std::memcmp(value.bytes().data(), got.at(name).bytes().data(), value.nbytes())) << name;
  std::ifstream in(b + "/stats.json"), whole_in(a + "/stats.json");
  EXPECT_EQ(nlohmann::json::parse(in), nlohmann::json::parse(whole_in));
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

// A resume inside an epoch asks for steps the epoch has: more than steps_per_epoch (a
// checkpoint of a run with longer epochs) is refused by name.
TEST(Resume, AStartingLocalStepBeyondTheEpochIsRefused) {
  train::TrainConfig config = tiny_config(3, 2);
  config.starting_epoch = 2;
  config.starting_global_step = 7;
  config.starting_local_step = 4;
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    ADD_FAILURE() << "starting_local_step 4 of a 3-step epoch was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("starting_local_step is 4"), std::string::npos) << e.what();
  }
}

// Mixed precision keeps its loss scale in variables (loss_scale.h): a resumed run
// continues with the scale the crashed one had reached, and ends bit for bit where the
// uninterrupted run does. The scale doubles every 2 clean steps here, so it moves.
TEST(Resume, AMixedPrecisionRunResumesWithItsLossScale) {
  auto mixed = [](train::TrainConfig c) {
    c.mixed_precision = true;
    c.loss_scale = {.initial_scale = 256.0f, .growth_interval = 2};
    return c;
  };
  const std::string a = temp_dir("resume-mixed-a"), b = temp_dir("resume-mixed-b");
  train::SimpleTrainer whole(device(), 11);
  train::launch_train_with_config(mixed(config_for(a, 4)), whole);
  {
    train::SimpleTrainer first(device(), 11);
    EXPECT_THROW(train::launch_train_with_config(mixed(config_for(b, 4, {std::make_shared<CrashAt>(8)})), first), Error);
  }
  train::SimpleTrainer resumed(device(), 11);
  train::launch_train_with_config(train::AutoResumeTrainConfig(mixed(config_for(b, 4))), resumed);
  const auto expected = all_variables(whole), got = all_variables(resumed);
  ASSERT_EQ(expected.size(), got.size());
  ASSERT_TRUE(expected.count(graph::kLossScaleVariable));
  for (const auto& [name, value] : expected)
    EXPECT_EQ(0, std::memcmp(value.bytes().data(), got.at(name).bytes().data(), value.nbytes())) << name;
  // 12 steps without an overflow: six doublings.
  EXPECT_EQ(expected.at(graph::kLossScaleVariable).data<float>()[0], 256.0f * 64.0f);
  std::ifstream in(b + "/stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  ASSERT_EQ(stats.size(), 4u);
  EXPECT_EQ(stats[3].at("loss_scale"), 256.0 * 64.0);
  EXPECT_EQ(stats[3].at("skipped_steps"), 0.0);
}

TEST(Resume, MaxSaverKeepsTheBestOfTheRunItResumes) {
  // "score" by epoch: best at epoch 2, then worse. The run stops after epoch 2 and is
  // resumed for epochs 3 and 4, whose scores must not replace epoch 2's checkpoint.
  const std::vector<double> scores{0.5, 0.9, 0.7, 0.8};
  const auto scored = [&](const std::string& dir, int epochs) {
    auto score = std::make_shared<Hooks>();
    score->trigger_epoch = [&](callbacks::TrainerView& t) {
      t.monitors().put_scalar("score", scores[static_cast<std::size_t>(t.epoch_num() - 1)]);
    };
    return config_for(dir, epochs, {score, std::make_shared<callbacks::MinSaver>("score", /*reverse=*/true)});
  };
  const std::string dir = temp_dir("resume-max");
  {
    train::SimpleTrainer first(device(), 11);
    train::launch_train_with_config(scored(dir, 2), first);
  }
  const std::string best = dir + "/max-score.safetensors";
  EXPECT_EQ(callbacks::load_checkpoint(best).info.global_step, 6);
  train::SimpleTrainer resumed(device(), 11);
  train::launch_train_with_config(train::AutoResumeTrainConfig(scored(dir, 4)), resumed);
  EXPECT_EQ(callbacks::load_checkpoint(best).info.global_step, 6) << "a worse epoch replaced the best checkpoint";
  // The history holds the first run's epochs (from stats.json) and the resumed ones.
  const std::vector<std::pair<std::int64_t, double>> history{{3, 0.5}, {6, 0.9}, {9, 0.7}, {12, 0.8}};
  EXPECT_EQ(resumed.monitors().get_history("score"), history);
  std::filesystem::remove_all(dir);
}

TEST(Resume, SettersThatDependOnTheCurrentValueResumeExactlyWhereverTheyStand) {
  // 6 epochs of 3 steps; a crash in epoch 5 resumes from epoch 4's checkpoint. The
  // plateau setter halves at the start of epochs 4 and 6 (last_k 1: epoch 5 waits), so the
  // resumed run must know of epoch 4's change; the function setter halves every epoch.
  const std::vector<double> stat{1.0, 0.5, 0.5, 0.5, 0.5, 0.5};
  for (const bool plateau : {true, false})
    for (const bool before_saver : {true, false}) {
      const std::string what = std::string(plateau ? "StatMonitorParamSetter" : "HyperParamSetterWithFunc") +
                               (before_saver ? " before" : " after") + " the ModelSaver";
      const auto config = [&](const std::string& dir, std::vector<float>& lrs, std::int64_t crash_at) {
        auto hooks = std::make_shared<Hooks>();
        hooks->trigger_epoch = [&](callbacks::TrainerView& t) {
          t.monitors().put_scalar("val", stat[static_cast<std::size_t>(t.epoch_num() - 1)]);
        };
        hooks->before_run = [&](callbacks::TrainerView& t) {
          if (t.local_step() == 0) lrs.push_back(t.hyperparameter("learning_rate"));
        };
        callbacks::CallbackPtr setter;
        if (plateau)
          setter = std::make_shared<callbacks::StatMonitorParamSetter>("learning_rate", "val",
                                                                       [](float v) { return v * 0.5f; }, 0.01, 1);
        else
          setter = std::make_shared<callbacks::HyperParamSetterWithFunc>("learning_rate",
                                                                         [](int, float v) { return v * 0.5f; });
        train::TrainConfig c = config_for(dir, 6);
        c.callbacks = {std::make_shared<callbacks::ModelSaver>(3)};
        c.callbacks.insert(before_saver ? c.callbacks.begin() : c.callbacks.end(), setter);
        c.callbacks.push_back(hooks);
        if (crash_at > 0) c.callbacks.push_back(std::make_shared<CrashAt>(crash_at));
        return c;
      };
      const std::string a = temp_dir("resume-set-a"), b = temp_dir("resume-set-b");
      std::vector<float> whole_lrs, first_lrs, resumed_lrs;
      train::SimpleTrainer whole(device(), 11);
      train::launch_train_with_config(config(a, whole_lrs, 0), whole);
      {
        train::SimpleTrainer first(device(), 11);
        EXPECT_THROW(train::launch_train_with_config(config(b, first_lrs, 13), first), Error) << what;
      }
      train::TrainConfig resumed_config = train::AutoResumeTrainConfig(config(b, resumed_lrs, 0));
      ASSERT_EQ(resumed_config.starting_epoch, 5) << what;
      train::SimpleTrainer resumed(device(), 11);
      train::launch_train_with_config(std::move(resumed_config), resumed);

      ASSERT_EQ(whole_lrs.size(), 6u) << what;
      if (plateau)
        EXPECT_EQ(whole_lrs, (std::vector<float>{0.01f, 0.01f, 0.01f, 0.005f, 0.005f, 0.0025f})) << what;
      else
        EXPECT_EQ(whole_lrs, (std::vector<float>{0.005f, 0.0025f, 0.00125f, 0.000625f, 0.0003125f, 0.00015625f})) << what;
      EXPECT_EQ(resumed_lrs, std::vector<float>(whole_lrs.begin() + 4, whole_lrs.end())) << what;
      const auto expected = all_variables(whole), got = all_variables(resumed);
      for (const auto& [name, value] : expected)
        EXPECT_EQ(0, std::memcmp(value.bytes().data(), got.at(name).bytes().data(), value.nbytes())) << what << ": " << name;
      std::filesystem::remove_all(a);
      std::filesystem::remove_all(b);
    }
}

// What a kill or a damaged disk can leave in a log directory: an index that does not
// parse stops a resume (rather than training from scratch over the checkpoints); no
// index resumes from the newest checkpoint that loads; a temporary left by a killed
// writer is removed, one of a live process kept.
TEST(Resume, DamagedIndexesAndLeftoversAreHandled) {
  namespace fs = std::filesystem;
  const std::string dir = temp_dir("resume-leftovers");
  {
    train::SimpleTrainer first(device(), 11);
    train::launch_train_with_config(config_for(dir, 3), first);  // model-3, -6, -9
  }
  const std::string index = dir + "/checkpoint";
  std::ofstream(index, std::ios::trunc) << "garbage\n";
  try {
    train::AutoResumeTrainConfig(config_for(dir, 4));
    FAIL() << "a damaged index was taken for none";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find(index + " does not parse"), std::string::npos) << e.what();
  }

  fs::remove(index);
  {  // the newest checkpoint damaged: its last byte flipped
    std::fstream f(dir + "/model-9.safetensors", std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(-1, std::ios::end);
    const char last = static_cast<char>(f.get());
    f.seekp(-1, std::ios::end);
    f.put(static_cast<char>(last ^ 0x10));
  }
  // A dead writer's temporary (pid 0x7ffffffe is far above any pid_max here) and a live one's.
  const std::string dead = dir + "/stats.json.tmp.2147483646.0badcafe";
  const std::string live = dir + "/stats.json.tmp." + std::to_string(::getppid()) + ".00c0ffee";
  std::ofstream(dead) << "{";
  std::ofstream(live) << "{";
  const train::TrainConfig resumed = train::AutoResumeTrainConfig(config_for(dir, 4));
  EXPECT_EQ(resumed.starting_global_step, 6) << "model-9 is damaged, model-6 is the newest valid";
  EXPECT_EQ(resumed.starting_epoch, 3);
  EXPECT_FALSE(fs::exists(dead));
  EXPECT_TRUE(fs::exists(live));
  fs::remove_all(dir);
}

// A resumed run whose input cannot give the same batches again says so, naming the
// dataflow; one whose input can says nothing of the kind.
TEST(Resume, AnInputThatCannotReplayIsNamedInTheLog) {
  // Trains one epoch, then resumes for a second with `input`: the warnings about it.
  const auto warnings_of_resume = [](const std::string& dir, train::InputSourcePtr input) {
    {
      train::SimpleTrainer first(device(), 11);
      train::launch_train_with_config(config_for(dir, 1), first);
    }
    std::vector<std::string> warnings;
    const int sink = logger().add_sink([&](LogLevel level, std::string_view line) {
      if (level == LogLevel::warn && line.find("resume is not exact") != std::string_view::npos)
        warnings.emplace_back(line);
    });
    train::TrainConfig c = train::AutoResumeTrainConfig(config_for(dir, 2));
    EXPECT_EQ(c.starting_global_step, 3);
    c.data = std::move(input);
    train::SimpleTrainer resumed(device(), 11);
    train::launch_train_with_config(std::move(c), resumed);
    logger().remove_sink(sink);
    std::filesystem::remove_all(dir);
    return warnings;
  };
  const std::vector<std::string> racing = warnings_of_resume(
      temp_dir("resume-racing"),
      std::make_shared<train::QueueInput>(std::make_unique<dataflow::MultiThreadRunner>(
          [](std::size_t i) { return tiny_flow(3, 16, i + 1); }, dataflow::MultiThreadRunnerOptions{.num_threads = 2})));
  ASSERT_EQ(racing.size(), 1u);
  EXPECT_NE(racing[0].find("MultiThreadRunner: 2 threads interleave"), std::string::npos) << racing[0];
  EXPECT_EQ(warnings_of_resume(temp_dir("resume-exact"), std::make_shared<train::QueueInput>(tiny_flow(3))),
            std::vector<std::string>{});
}

TEST(Resume, NothingToResumeLeavesTheConfigAlone) {
  const std::string dir = temp_dir("resume-none");
  const train::TrainConfig c = train::AutoResumeTrainConfig(config_for(dir, 4));
  EXPECT_EQ(c.starting_epoch, 1);
  EXPECT_EQ(c.session_init, nullptr);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
