// The multi-device trainers in full training runs: a one-line change from SimpleTrainer
// trains the tiny model on two VkDevices, keeps the towers equal, lets hyperparameter
// setters reach every tower, saves tower 0's state, and names a missing device.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "vkpack/callbacks/checkpoint.h"
#include "vkpack/callbacks/data_parallel_inference.h"
#include "vkpack/callbacks/monitors.h"
#include "vkpack/callbacks/param_setters.h"
#include "vkpack/callbacks/saver.h"
#include "vkpack/core/error.h"
#include "vkpack/dataflow/data_from_list.h"
#include "vkpack/train/multi_device_trainer.h"

namespace vkp::test {
namespace {

bool same_bits(const Array& a, const Array& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

void expect_towers_equal(train::MultiDeviceTrainer& trainer) {
  towers::Towers& t = trainer.towers();
  for (const std::string& name : t.trainable_names())
    for (int k = 1; k < t.size(); ++k)
      EXPECT_TRUE(same_bits(t.session(k).variable(name), t.session(0).variable(name))) << name << " on tower " << k;
}

TEST(MultiDeviceTrainer, ReplicatedTrainsAndKeepsTowersEqual) {
  const std::string dir = temp_dir("multi-device");
  train::TrainConfig config = tiny_config(6, 4);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::ModelSaver>(2)};
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(trainer.global_step(), 24);  // 6 steps, each of one batch per tower
  EXPECT_EQ(trainer.samples_per_step(), 32);
  EXPECT_LT(trainer.last_cost(), 0.4);
  expect_towers_equal(trainer);
  const callbacks::Checkpoint c = callbacks::load_checkpoint(callbacks::latest_checkpoint(dir));
  EXPECT_EQ(c.info.global_step, 24);
  EXPECT_TRUE(same_bits(c.variables.at("fc0/W"), trainer.session().variable("fc0/W")));
  EXPECT_TRUE(c.variables.count("fc0/W/Momentum"));
  std::filesystem::remove_all(dir);
}

TEST(MultiDeviceTrainer, HyperparametersReachEveryTower) {
  // A learning rate of 0 from epoch 2 freezes the variables of both towers: tower 1's
  // change within epoch 1 (steps 1 to 2) and not after it (steps 2 to 6).
  train::TrainConfig config = tiny_config(2, 3);
  auto freeze = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.1f}, {2, 0.0f}});
  std::vector<Array> tower1;
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
  auto look = std::make_shared<Hooks>();
  look->trigger_step = [&](callbacks::TrainerView& t) {
    if (t.global_step() == 1 || t.global_step() == 2 || t.global_step() == 6)
      tower1.push_back(trainer.towers().session(1).variable("fc1/W"));
  };
  config.callbacks = {freeze, look};
  train::launch_train_with_config(std::move(config), trainer);
  ASSERT_EQ(tower1.size(), 3u);
  EXPECT_FALSE(same_bits(tower1[0], tower1[1]));
  EXPECT_TRUE(same_bits(tower1[1], tower1[2]));
}

TEST(MultiDeviceTrainer, ParameterServerAndAsyncTrain) {
  for (int mode = 0; mode < 2; ++mode) {
    train::TrainConfig config = tiny_config(6, 4);
    std::unique_ptr<train::MultiDeviceTrainer> trainer;
    if (mode == 0)
      trainer = std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(
          instance(), std::vector<int>{device_index(), device_index()}, 3, device_options());
    else
      trainer = std::make_unique<train::AsyncMultiDeviceTrainer>(
          instance(), std::vector<int>{device_index(), device_index()}, 3, 0.5f, device_options());
    train::launch_train_with_config(std::move(config), *trainer);
    EXPECT_LT(trainer->last_cost(), 0.4) << (mode == 0 ? "parameter server" : "async");
    expect_towers_equal(*trainer);
  }
}

TEST(MultiDeviceTrainer, DataParallelInferenceEqualsInferenceOnOneTower) {
  // Both runners see the same variables at the end of every epoch: their statistics
  // agree to rounding (the towers are other devices of the same kind, in another order).
  auto inferencers = [] {
    return std::vector<callbacks::InferencerPtr>{
        std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"cost", "accuracy"}, "one"),
        std::make_shared<callbacks::ClassificationError>("incorrect_vector", "one_error")};
  };
  auto parallel = [] {
    return std::vector<callbacks::InferencerPtr>{
        std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"cost", "accuracy"}, "towers"),
        std::make_shared<callbacks::ClassificationError>("incorrect_vector", "towers_error")};
  };
  train::TrainConfig config = tiny_config(4, 2);
  // 5 batches of unequal sizes over 3 towers: one round of 3, one of 2.
  std::vector<dataflow::Datapoint> validation = tiny_batches(4, 10, 42);
  validation.push_back(tiny_batches(1, 3, 43)[0]);
  auto flow = [&validation] { return std::make_unique<dataflow::DataFromList>(validation, false); };
  config.callbacks = {std::make_shared<callbacks::InferenceRunner>(flow(), inferencers()),
                      std::make_shared<callbacks::DataParallelInferenceRunner>(flow(), parallel())};
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index(), device_index()}, 4,
                                                  device_options());
  train::launch_train_with_config(std::move(config), trainer);
  const callbacks::Monitors& m = trainer.monitors();
  for (const char* stat : {"_cost", "_accuracy"}) {
    const auto& one = m.get_history(std::string("one") + stat);
    const auto& towers = m.get_history(std::string("towers") + stat);
    ASSERT_EQ(one.size(), 2u);
    ASSERT_EQ(towers.size(), 2u);
    for (int e = 0; e < 2; ++e) EXPECT_NEAR(one[e].second, towers[e].second, 1e-6) << stat << " epoch " << e + 1;
  }
  EXPECT_EQ(m.get_latest("one_error"), m.get_latest("towers_error"));
}

TEST(MultiDeviceTrainer, ALostDeviceStopsTrainingNamingItAndKeepsTheCheckpoint) {
  const std::string dir = temp_dir("device-lost");
  train::TrainConfig config = tiny_config(3, 4);
  config.logger_dir = dir;
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
  Array saved;  // fc0/W when epoch 1's checkpoint was written
  auto faults = std::make_shared<Hooks>();
  faults->trigger_epoch = [&](callbacks::TrainerView& t) { saved = t.session().variable("fc0/W"); };
  faults->trigger_step = [&](callbacks::TrainerView& t) {
    if (t.global_step() == 5) trainer.towers().session(1).device().simulate_loss();
  };
  config.callbacks = {std::make_shared<callbacks::ModelSaver>(3), faults};
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "training went on without tower 1";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::device_lost);
    const std::string what = e.what();
    EXPECT_NE(what.find("tower 1"), std::string::npos) << what;
    EXPECT_NE(what.find("was lost"), std::string::npos) << what;
  }
  EXPECT_EQ(trainer.global_step(), 5);
  const std::string latest = callbacks::latest_checkpoint(dir);
  EXPECT_EQ(std::filesystem::path(latest).filename(), "model-3.safetensors");
  const callbacks::Checkpoint c = callbacks::load_checkpoint(latest);
  EXPECT_TRUE(same_bits(c.variables.at("fc0/W"), saved));
  std::filesystem::remove_all(dir);
}

TEST(MultiDeviceTrainer, NamesAMissingDevice) {
  try {
    train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), 97}, 0, device_options());
    FAIL() << "device 97 opened";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("97"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
