// A run that crashes and is resumed with AutoResumeTrainConfig ends bit for bit where an
// uninterrupted run ends: variables, optimizer slots, moving averages, global step,
// hyperparameters and dropout masks all come back; stats.json keeps the epochs before
// the crash and appends the rest, and they are the Monitors' history again, so a MaxSaver
// keeps the earlier run's best.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "vkpack/callbacks/checkpoint.h"
#include "vkpack/callbacks/monitors/json_writer.h"
#include "vkpack/callbacks/param_setters.h"
#include "vkpack/callbacks/saver.h"
#include "vkpack/callbacks/summary.h"
#include "vkpack/core/error.h"
#include "vkpack/engine/graph/optimizer.h"
#include "vkpack/engine/graph/variables.h"
#include "vkpack/train/tower_trainer.h"

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

TEST(Resume, NothingToResumeLeavesTheConfigAlone) {
  const std::string dir = temp_dir("resume-none");
  const train::TrainConfig c = train::AutoResumeTrainConfig(config_for(dir, 4));
  EXPECT_EQ(c.starting_epoch, 1);
  EXPECT_EQ(c.session_init, nullptr);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
