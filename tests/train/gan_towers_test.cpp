// GANs on several devices (MultiDeviceGANTrainer), against GAN training on one device:
// two towers of batch 8 must train the one-dimensional GAN as GANTrainer trains it on
// the same 16 samples a step (the mean losses over 16 are the averages of those over two
// 8s), with replicated reduction and with the parameter server, and with periods; a
// crashed and resumed run on two towers ends bit for bit where an uninterrupted one
// does; in mixed precision each net keeps its own scale on every tower; what the towers
// cannot train is refused by name.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <map>

#include "callbacks/saver.h"
#include "core/error.h"
#include "dataflow/data_from_list.h"
#include "gan_fixtures.h"
#include "max_difference.h"
#include "towers/towers.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

constexpr std::int64_t kHalf = kBatch / 2;

// Steps of batch 16 made of consecutive pairs of `halves` (8 each), in order.
std::vector<dataflow::Datapoint> joined(const std::vector<dataflow::Datapoint>& halves) {
  std::vector<dataflow::Datapoint> out;
  for (std::size_t i = 0; i + 1 < halves.size(); i += 2) {
    dataflow::Datapoint dp;
    for (std::size_t c = 0; c < halves[i].size(); ++c) {
      const Array &a = halves[i][c], &b = halves[i + 1][c];
      Array both(DType::f32, Shape{a.shape()[0] + b.shape()[0], a.shape()[1]});
      std::memcpy(both.bytes().data(), a.bytes().data(), a.nbytes());
      std::memcpy(both.bytes().data() + a.nbytes(), b.bytes().data(), b.nbytes());
      dp.push_back(both);
    }
    out.push_back(dp);
  }
  return out;
}

train::TrainConfig config_of(std::shared_ptr<OneDimGan> model, std::vector<dataflow::Datapoint> list, int steps,
                             int epochs) {
  train::TrainConfig config;
  config.model = std::move(model);
  config.data = std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(std::move(list), false));
  config.steps_per_epoch = steps;
  config.max_epoch = epochs;
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  return config;
}

// Every variable of `one` (slots included) against the same of `towers`.
void expect_close(train::Trainer& one, train::Trainer& towers, float tolerance) {
  const auto expected = all_variables(one), got = all_variables(towers);
  ASSERT_EQ(expected.size(), got.size());
  ASSERT_TRUE(expected.count("gen/fc0/W/Adam") && expected.count("discrim/fc1/b/Adam_1")) << "both nets' slots";
  for (const auto& [name, value] : expected) EXPECT_LE(max_difference(value, got.at(name)), tolerance) << name;
}

void expect_towers_train_as_one(towers::Reduction reduction, int d_period, int g_period) {
  const int steps = 6, epochs = 2;
  const std::vector<dataflow::Datapoint> halves = batches(2 * steps, kHalf);
  auto whole = std::make_shared<OneDimGan>(true, kBatch);
  train::GANTrainer one(device(), whole, 5, d_period, g_period);
  train::launch_train_with_config(config_of(whole, joined(halves), steps, epochs), one);
  auto half = std::make_shared<OneDimGan>(true, kHalf);
  train::MultiDeviceGANTrainer two(instance(), {device_index(), device_index()}, half,
                                   {.reduction = reduction, .seed = 5, .d_period = d_period, .g_period = g_period},
                                   device_options());
  train::launch_train_with_config(config_of(half, halves, steps, epochs), two);
  EXPECT_EQ(two.global_step(), one.global_step());
  expect_close(one, two, 2e-5f);
  // Training moved the generator: the comparison is not of untouched initial values.
  auto fresh = std::make_shared<OneDimGan>(true, kBatch);
  train::GANTrainer untrained(device(), fresh, 5);
  train::launch_train_with_config(config_of(fresh, joined(halves), 1, 1), untrained);
  EXPECT_GT(max_difference(one.variable("gen/fc1/W"), untrained.variable("gen/fc1/W")), 1e-3f);
}

TEST(MultiDeviceGANTrainer, ReplicatedTowersTrainAsOneDeviceOnTheirJoinedBatches) {
  expect_towers_train_as_one(towers::Reduction::replicated, 1, 1);
}

TEST(MultiDeviceGANTrainer, TheParameterServerTrainsAsOneDevice) {
  expect_towers_train_as_one(towers::Reduction::parameter_server, 1, 1);
}

TEST(MultiDeviceGANTrainer, KeepsSeparateGANTrainersPeriods) {
  expect_towers_train_as_one(towers::Reduction::replicated, 1, 3);
  expect_towers_train_as_one(towers::Reduction::parameter_server, 2, 1);
}

TEST(MultiDeviceGANTrainer, ACrashedAndResumedRunEqualsAnUninterruptedOne) {
  const std::string a = temp_dir("gan-towers-a"), b = temp_dir("gan-towers-b");
  const auto config_for = [](const std::string& dir, std::shared_ptr<OneDimGan> model,
                             std::vector<callbacks::CallbackPtr> extra) {
    train::TrainConfig config = config_of(std::move(model), batches(6, kHalf), 3, 4);
    config.logger_dir = dir;
    config.callbacks = {std::make_shared<callbacks::ModelSaver>(3)};
    config.callbacks.insert(config.callbacks.end(), extra.begin(), extra.end());
    return config;
  };
  const auto trainer = [](std::shared_ptr<OneDimGan> model) {
    return std::make_unique<train::MultiDeviceGANTrainer>(
        instance(), std::vector<int>{device_index(), device_index()}, std::move(model),
        train::GANTowerOptions{.reduction = towers::Reduction::parameter_server, .seed = 3}, device_options());
  };
  auto model = std::make_shared<OneDimGan>(true, kHalf);
  auto whole = trainer(model);
  train::launch_train_with_config(config_for(a, model, {}), *whole);
  {
    auto m = std::make_shared<OneDimGan>(true, kHalf);
    auto first = trainer(m);
    EXPECT_THROW(train::launch_train_with_config(config_for(b, m, {std::make_shared<CrashAt>(8)}), *first), Error);
  }
  auto m = std::make_shared<OneDimGan>(true, kHalf);
  auto resumed = trainer(m);
  train::launch_train_with_config(train::AutoResumeTrainConfig(config_for(b, m, {})), *resumed);
  expect_same_gan_state(*whole, *resumed);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

TEST(MultiDeviceGANTrainer, RefusesWhatItCannotTrain) {
  auto model = std::make_shared<OneDimGan>(true, kHalf);
  const std::vector<int> two{device_index(), device_index()};
  try {
    train::MultiDeviceGANTrainer t(instance(), two, model, {.reduction = towers::Reduction::async, .seed = 1},
                                   device_options());
    ADD_FAILURE() << "async towers were taken";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
  }
  EXPECT_THROW(
      train::MultiDeviceGANTrainer(instance(), two, model, {.seed = 1, .d_period = 2, .g_period = 3}, device_options()),
      Error);
}

// Mixed precision as on one device: two towers of 128 (hidden activations of 1,024
// elements, stored as float16) train as GANTrainer in mixed precision on the joined
// batches of 256, within float16's rounding (2% of each variable's size, as one device
// against float32), with a scale for each net that moves alike, and each net's
// statistics reach the monitors.
TEST(MultiDeviceGANTrainer, MixedPrecisionTowersTrainAsOneDevice) {
  constexpr std::int64_t kWideHalf = 128;
  const int steps = 6;
  const std::vector<dataflow::Datapoint> halves = batches(2 * steps, kWideHalf);
  auto whole = std::make_shared<OneDimGan>(true, 2 * kWideHalf);
  train::GANTrainer one(device(), whole, 5);
  train::TrainConfig config = config_of(whole, joined(halves), steps, 1);
  config.mixed_precision = true;
  train::launch_train_with_config(std::move(config), one);
  auto half = std::make_shared<OneDimGan>(true, kWideHalf);
  train::MultiDeviceGANTrainer two(instance(), {device_index(), device_index()}, half, {.seed = 5}, device_options());
  config = config_of(half, halves, steps, 1);
  config.mixed_precision = true;
  train::launch_train_with_config(std::move(config), two);
  for (const graph::Tensor& v : one.graph().trainable_variables()) {
    const std::string& name = std::get<graph::VariableAttrs>(v.node().attrs).var_name;
    const Array want = one.variable(name), got = two.variable(name);
    float size = 0;
    for (float x : want.data<float>()) size = std::max(size, std::abs(x));
    EXPECT_LE(max_difference(got, want), 2e-2f * size) << name;
  }
  for (const char* net : {train::kDiscriminatorLossScale, train::kGeneratorLossScale})
    for (const char* part : {"/scale", "/good_steps", "/skipped_steps"}) {
      const std::string name = std::string(net) + part;
      EXPECT_EQ(two.variable(name).data<float>()[0], one.variable(name).data<float>()[0]) << name;
      EXPECT_EQ(two.towers().session(1).variable(name).data<float>()[0], one.variable(name).data<float>()[0])
          << "tower 1's " << name;
    }
  for (const char* statistic : {"d_loss_scale", "d_skipped_steps", "g_loss_scale", "g_skipped_steps"})
    EXPECT_FALSE(two.monitors().get_history(statistic).empty()) << statistic;
}

// Each net's own scale on every tower, whoever keeps it (every replicated tower; the
// parameter server's host master, which sends it on): at a scale no float16 gradient
// survives, with the generator every second step, after 3 steps the discriminator
// skipped 3 and halved thrice and the generator skipped 2 and halved twice, in both
// towers; no variable moved.
TEST(MultiDeviceGANTrainer, AnOverflowSkipsThatNetsUpdateOnEveryTower) {
  for (const towers::Reduction reduction : {towers::Reduction::replicated, towers::Reduction::parameter_server}) {
    SCOPED_TRACE(towers::to_string(reduction));
    auto model = std::make_shared<OneDimGan>(false, 128);
    train::MultiDeviceGANTrainer two(instance(), {device_index(), device_index()}, model,
                                     {.reduction = reduction, .seed = 5, .g_period = 2}, device_options());
    constexpr float kScale = 1073741824.0f;  // 2^30
    two.enable_mixed_precision({.initial_scale = kScale, .growth_interval = 100, .max_scale = kScale});
    std::map<std::string, Array> before;
    auto look = std::make_shared<Hooks>();
    look->before_epoch = [&](callbacks::TrainerView& t) {
      for (const char* name : {"gen/fc0/W", "discrim/fc0/W"}) before[name] = t.variable(name);
    };
    train::TrainConfig config = config_of(model, batches(6, 128), 3, 1);
    config.callbacks = {look};
    train::launch_train_with_config(std::move(config), two);
    for (int k = 0; k < 2; ++k) {
      graph::Session& s = two.towers().session(k);
      const auto value = [&](const std::string& name) { return s.variable(name).data<float>()[0]; };
      EXPECT_EQ(value("d_loss_scale/scale"), kScale / 8) << "tower " << k;
      EXPECT_EQ(value("d_loss_scale/skipped_steps"), 3.0f) << "tower " << k;
      EXPECT_EQ(value("g_loss_scale/scale"), kScale / 4) << "tower " << k;
      EXPECT_EQ(value("g_loss_scale/skipped_steps"), 2.0f) << "tower " << k;
      for (const auto& [name, was] : before) EXPECT_EQ(max_difference(s.variable(name), was), 0.0f) << name;
    }
  }
}

}  // namespace
}  // namespace vkp::test
