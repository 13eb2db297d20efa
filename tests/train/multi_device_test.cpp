// The multi-device trainers in full training runs: a one-line change from SimpleTrainer
// trains the tiny model on two VkDevices, keeps the towers equal, lets hyperparameter
// setters reach every tower, saves tower 0's state (with the parameter server's host
// master, its slots too, and resumes from it), and names a missing device.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <functional>

#include "callbacks/checkpoint.h"
#include "callbacks/data_parallel_inference.h"
#include "callbacks/monitors.h"
#include "callbacks/param_setters.h"
#include "callbacks/periodic.h"
#include "callbacks/saver.h"
#include "core/error.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "slow_work.h"
#include "towers/host_master.h"
#include "train/input_source.h"
#include "train/multi_device_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

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

// Counts the batches it hands on.
class CountingInput : public train::InputSource {
 public:
  explicit CountingInput(train::InputSourcePtr source) : source_(std::move(source)) {}
  std::optional<std::size_t> size() const override { return source_->size(); }
  int batches = 0;

 protected:
  void on_setup() override { source_->setup(specs()); }
  std::vector<Array> on_next() override {
    ++batches;
    return source_->next_batch();
  }

 private:
  train::InputSourcePtr source_;
};

// StagingInput on several towers: every tower's next batch is read and written while the
// current step runs (one step ahead of the batches trained on), and the run is bit for
// bit the one without staging.
TEST(MultiDeviceTrainer, StagingInputDoubleBuffersEveryTower) {
  const auto run = [](bool staging, int& batches_read) {
    train::TrainConfig config = tiny_config(6, 2);
    auto counting = std::make_shared<CountingInput>(std::make_shared<train::FeedInput>(tiny_flow(6)));
    config.data = staging ? train::InputSourcePtr(std::make_shared<train::StagingInput>(counting)) : counting;
    train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
    train::launch_train_with_config(std::move(config), trainer);
    EXPECT_EQ(trainer.global_step(), 12);
    expect_towers_equal(trainer);
    batches_read = counting->batches;
    return all_variables(trainer);
  };
  int plain_reads = 0, staged_reads = 0;
  const auto plain = run(false, plain_reads), staged = run(true, staged_reads);
  EXPECT_EQ(plain_reads, 12 * 2);
  EXPECT_EQ(staged_reads, 12 * 2 + 2) << "the towers did not read one step ahead";
  ASSERT_EQ(plain.size(), staged.size());
  for (const auto& [name, value] : plain) EXPECT_TRUE(same_bits(value, staged.at(name))) << name;
}

// The towers hold the sessions: the trainer makes no session of its own on the first
// device, so it holds no device memory before its towers exist.
TEST(MultiDeviceTrainer, HoldsNoSessionOfItsOwn) {
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 3, device_options());
  EXPECT_EQ(trainer.device_memory_bytes(), 0u);
  EXPECT_THROW(trainer.session(), Error);  // tower 0's, once setup_graph has made the towers
}

// Mixed precision on every reduction, as a user turns it on (TrainConfig): each trainer
// trains, keeps the loss scale where it updates (the host master of the parameter server
// and of async towers) and reports it. The tiny model's gradients never overflow, so the
// scale doubles every 2 updates: one a step for synchronous towers, one a batch (two a
// step) for async ones. (tests/towers/mixed_precision_test.cpp checks what each computes.)
TEST(MultiDeviceTrainer, EveryReductionTrainsInMixedPrecisionAndReportsTheScale) {
  const std::vector<int> two{device_index(), device_index()};
  struct Case {
    std::unique_ptr<train::MultiDeviceTrainer> trainer;
    const char* what;
    std::int64_t updates_per_step;
  };
  std::vector<Case> cases;
  cases.push_back({std::make_unique<train::SyncMultiDeviceTrainerReplicated>(instance(), two, 3, device_options()),
                   "replicated", 1});
  cases.push_back({std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(instance(), two, 3, device_options()),
                   "parameter server", 1});
  cases.push_back(
      {std::make_unique<train::AsyncMultiDeviceTrainer>(instance(), two, 3, 1.0f, device_options()), "async", 2});
  for (Case& c : cases) {
    train::TrainConfig config = tiny_config(4, 2);
    config.mixed_precision = true;
    config.loss_scale = {.initial_scale = 64.0f, .growth_interval = 2, .max_scale = 1024.0f};
    train::launch_train_with_config(std::move(config), *c.trainer);
    const std::int64_t updates = c.trainer->global_step() * c.updates_per_step;
    const float want = std::min(1024.0f, 64.0f * std::exp2(static_cast<float>(updates / 2)));
    EXPECT_EQ(c.trainer->variable("loss_scale/scale").data<float>()[0], want) << c.what;
    EXPECT_EQ(c.trainer->towers().session(1).variable("loss_scale/scale").data<float>()[0], want) << c.what;
    EXPECT_EQ(c.trainer->monitors().get_latest("loss_scale"), want) << c.what;
    EXPECT_EQ(c.trainer->monitors().get_latest("skipped_steps"), 0.0) << c.what;
    EXPECT_LT(c.trainer->last_cost(), 1.0) << c.what;
  }
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

// The tiny model whose training tower 1 is slow: its cost also holds zero times a chain
// of products of its input, which no variable depends on (a slower GPU; slow_work.h).
class SlowSecondTower : public TinyModel {
 public:
  graph::Tensor build_graph(const std::vector<graph::Tensor>& in) override {
    graph::Tensor cost = TinyModel::build_graph(in);
    graph::Graph& g = in[0].graph();
    if (g.tower().index != 1 || !g.tower().is_training) return cost;
    return cost + slow_work(in[0]);
  }
};

TEST(MultiDeviceTrainer, AsyncTowersRunFreeReportTheirUpdatesAndSaveTheMastersState) {
  // 3 epochs of 12 steps, 2 batches a step, tower 1 slow; a learning rate of 0 from epoch
  // 3; a ModelSaver every 8 steps, so that most saves come mid-epoch (each drains the
  // towers: the fast one waits for the slow one's last gradient there).
  const std::string dir = temp_dir("async");
  train::TrainConfig config = tiny_config(12, 3);
  config.model = std::make_shared<SlowSecondTower>();
  config.logger_dir = dir;
  train::AsyncMultiDeviceTrainer trainer(instance(), {device_index(), device_index()}, 3, 1.0f, device_options());
  auto saver = std::make_shared<callbacks::ModelSaver>(10);
  auto freeze = std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.1f}, {3, 0.0f}});
  std::map<std::string, Array> seen;  // checkpoint path -> fc0/W a callback read right after the save
  Array after_epoch_2;
  auto look = std::make_shared<Hooks>();
  look->trigger_step = [&](callbacks::TrainerView& t) {
    if (t.global_step() % 8 == 0) seen[saver->last_saved()] = t.variable("fc0/W");
  };
  look->trigger_epoch = [&](callbacks::TrainerView& t) {
    if (t.epoch_num() == 2) after_epoch_2 = t.variable("fc0/W");
  };
  config.callbacks = {freeze, std::make_shared<callbacks::PeriodicTrigger>(saver, 8), look};
  train::launch_train_with_config(std::move(config), trainer);

  EXPECT_EQ(trainer.global_step(), 36);
  // Updates by epoch; the first epoch also builds each tower's kernels, which can take the
  // fast tower longer than the slow work takes the slow one (seen: 8 vs 16 with an empty
  // shader cache), so the ratio is asked of epochs 2 and 3.
  const auto updates = [&](int k) {
    std::vector<std::uint64_t> by_epoch;
    for (const auto& [step, value] : trainer.monitors().get_history(fmt::format("async/tower{}/updates", k)))
      by_epoch.push_back(static_cast<std::uint64_t>(value));
    return by_epoch;
  };
  const std::vector<std::uint64_t> fast = updates(0), slow = updates(1);
  ASSERT_EQ(fast.size(), 3u);
  ASSERT_EQ(slow.size(), 3u);
  EXPECT_EQ(fast[0] + fast[1] + fast[2] + slow[0] + slow[1] + slow[2], 72u) << "one update per batch";
  // In lockstep the counts would be equal. The saves drain the towers, the fast one
  // waiting there for the slow one, so the ratio stays below the towers' speed ratio:
  // 44 vs 4 over epochs 2 and 3 on lavapipe and SwiftShader, with an empty cache or not.
  const std::uint64_t fast_later = fast[1] + fast[2], slow_later = slow[1] + slow[2];
  EXPECT_GE(2 * fast_later, 3 * slow_later)
      << "the fast tower was held back in epochs 2 and 3: fast " << fast_later << ", slow " << slow_later;
  EXPECT_GE(trainer.monitors().get_latest("async/tower1/staleness_max"), 1.0);
  EXPECT_LT(trainer.last_cost(), 0.5);
  expect_towers_equal(trainer);
  // Saves drain the towers: the checkpoint holds what the master held then.
  ASSERT_EQ(seen.size(), 4u);
  for (const auto& [path, value] : seen)
    EXPECT_TRUE(same_bits(callbacks::load_checkpoint(path).variables.at("fc0/W"), value)) << path;
  // The setter's learning rate of 0 reached the master: epoch 3 changed nothing.
  EXPECT_TRUE(same_bits(trainer.variable("fc0/W"), after_epoch_2));
  std::filesystem::remove_all(dir);
}

std::unique_ptr<train::SyncMultiDeviceTrainerParameterServer> parameter_server(
    train::ParameterServerOptions options = {}) {
  return std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(
      instance(), std::vector<int>{device_index(), device_index()}, 3, device_options(), options);
}

// Bitwise with tolerance 0, else every element within it.
void expect_same_variables(const std::map<std::string, Array>& got, const std::map<std::string, Array>& want,
                           const std::string& what, float tolerance = 0) {
  ASSERT_EQ(got.size(), want.size()) << what;
  for (const auto& [name, value] : want) {
    if (tolerance == 0) {
      EXPECT_TRUE(same_bits(got.at(name), value)) << what << ": " << name;
      continue;
    }
    for (std::size_t i = 0; i < value.data<float>().size(); ++i)
      ASSERT_NEAR(got.at(name).data<float>()[i], value.data<float>()[i], tolerance) << what << ": " << name;
  }
}

TEST(MultiDeviceTrainer, HostMasterCheckpointsItsSlotsAndEqualsTheDeviceMaster) {
  // Momentum: on a CPU device the host's update is bitwise the shader's, so the whole
  // run is too (towers_test.cpp says why a GPU may differ in the last bits).
  std::map<std::string, Array> checkpoints[2], master;  // by master: host, device
  bool ieee = true;
  for (const towers::Master where : {towers::Master::host, towers::Master::device}) {
    const std::string dir = temp_dir("ps-master");
    train::TrainConfig config = tiny_config(4, 2);
    config.logger_dir = dir;
    auto trainer = parameter_server({.master = where});
    auto look = std::make_shared<Hooks>();
    look->trigger_epoch = [&](callbacks::TrainerView&) {  // after the ModelSaver's
      if (!trainer->towers().host_master()) return;
      for (const auto& [name, value] : all_variables(*trainer))
        if (name.find("Momentum") != std::string::npos) master[name] = trainer->towers().host_master()->value(name);
    };
    config.callbacks = {std::make_shared<callbacks::ModelSaver>(2), look};
    train::launch_train_with_config(std::move(config), *trainer);
    EXPECT_EQ(trainer->towers().host_master() != nullptr, where == towers::Master::host);
    ieee = trainer->device().kind() == vk::DeviceKind::cpu;
    expect_towers_equal(*trainer);
    checkpoints[where == towers::Master::host ? 0 : 1] =
        callbacks::load_checkpoint(callbacks::latest_checkpoint(dir)).variables;
    std::filesystem::remove_all(dir);
  }
  ASSERT_EQ(master.size(), 6u);  // fc0, fc1: W and b; bn: gamma and beta
  for (const auto& [name, value] : master) {
    EXPECT_TRUE(same_bits(checkpoints[0].at(name), value)) << name << ": the checkpoint has stale slots";
    bool trained = false;
    for (float x : value.data<float>()) trained = trained || x != 0;
    EXPECT_TRUE(trained) << name;
  }
  expect_same_variables(checkpoints[0], checkpoints[1], "host master against device master", ieee ? 0.0f : 1e-5f);
}

TEST(MultiDeviceTrainer, HostMasterSlotsReachTowerZeroAtEpochEndsAndWhenSaved) {
  // 2 epochs of 3 steps; a ModelSaver every 2 steps, so that one saves mid-epoch.
  const std::string dir = temp_dir("ps-slots");
  auto trainer = parameter_server();
  auto saver = std::make_shared<callbacks::ModelSaver>(10);
  std::vector<bool> current;  // by step, after the saver: tower 0's slot equals the master's
  std::vector<bool> seen;     // by step: what a callback reads (TrainerView::variable) equals the master's
  Array at_step_4;            // the master's slot when the mid-epoch checkpoint was written
  std::string saved_at_4;
  auto look = std::make_shared<Hooks>();
  look->trigger_step = [&](callbacks::TrainerView& t) {
    ASSERT_NE(trainer->towers().host_master(), nullptr);
    const Array& master = trainer->towers().host_master()->value("fc0/W/Momentum");
    current.push_back(same_bits(trainer->session().variable("fc0/W/Momentum"), master));  // tower 0's own
    seen.push_back(same_bits(t.variable("fc0/W/Momentum"), master));
    if (t.global_step() == 4) {
      at_step_4 = master;
      saved_at_4 = saver->last_saved();
    }
  };
  train::TrainConfig config = tiny_config(3, 2);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::PeriodicTrigger>(saver, 2), look};
  train::launch_train_with_config(std::move(config), *trainer);
  // Steps 3 and 6 end an epoch: the sync comes after their trigger_step.
  EXPECT_EQ(current, (std::vector<bool>{false, true, false, true, false, true}));
  EXPECT_EQ(seen, std::vector<bool>(6, true)) << "a callback read a stale slot";
  EXPECT_TRUE(same_bits(trainer->session().variable("fc0/W/Momentum"),
                        trainer->towers().host_master()->value("fc0/W/Momentum")))
      << "tower 0 after training";
  ASSERT_FALSE(saved_at_4.empty());
  EXPECT_TRUE(same_bits(callbacks::load_checkpoint(saved_at_4).variables.at("fc0/W/Momentum"), at_step_4))
      << "the mid-epoch checkpoint has stale slots";
  std::filesystem::remove_all(dir);
}

// As resume_test.cpp with SimpleTrainer: 4 epochs of 3 steps with `callbacks` (made
// afresh for each run), uninterrupted and crashed after global step 8, then resumed from
// step `from` (`local` steps into its epoch) on the parameter server's host master. The
// restore writes tower 0, from which the towers and the master take it at the first
// step the resumed run trains.
void expect_resume_equals_uninterrupted(const std::string& name,
                                        const std::function<std::vector<callbacks::CallbackPtr>()>& callbacks,
                                        std::int64_t from, std::int64_t local) {
  auto config_for = [&](const std::string& dir, std::vector<callbacks::CallbackPtr> extra = {}) {
    train::TrainConfig config = tiny_config(3, 4);
    config.model = std::make_shared<TinyAdamModel>();
    config.logger_dir = dir;
    config.callbacks = callbacks();
    for (auto& cb : extra) config.callbacks.push_back(cb);
    return config;
  };
  const std::string a = temp_dir(name + "-a"), b = temp_dir(name + "-b");
  auto whole = parameter_server();
  train::launch_train_with_config(config_for(a), *whole);
  {
    auto first = parameter_server();
    EXPECT_THROW(train::launch_train_with_config(config_for(b, {std::make_shared<CrashAt>(8)}), *first), Error);
  }
  train::TrainConfig resumed_config = train::AutoResumeTrainConfig(config_for(b));
  EXPECT_EQ(resumed_config.starting_global_step, from);
  EXPECT_EQ(resumed_config.starting_local_step, local);
  auto resumed = parameter_server();
  train::launch_train_with_config(std::move(resumed_config), *resumed);
  EXPECT_EQ(resumed->global_step(), whole->global_step());
  expect_same_variables(all_variables(*resumed), all_variables(*whole), "resumed against uninterrupted");
  expect_towers_equal(*resumed);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

// From epoch 2's checkpoint (the crash is in epoch 3).
TEST(MultiDeviceTrainer, HostMasterCrashedAndResumedRunEqualsAnUninterruptedOne) {
  expect_resume_equals_uninterrupted(
      "ps-resume",
      [] {
        return std::vector<callbacks::CallbackPtr>{
            std::make_shared<callbacks::ModelSaver>(3),
            std::make_shared<callbacks::ScheduledHyperParamSetter>(
                "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.02f}, {3, 0.005f}})};
      },
      6, 0);
}

// From a checkpoint inside epoch 3 (saved every 2 steps: at step 8, 2 steps into it),
// whose first step is not local step 0.
TEST(MultiDeviceTrainer, HostMasterResumedInsideAnEpochEqualsAnUninterruptedRun) {
  expect_resume_equals_uninterrupted(
      "ps-resume-mid",
      [] {
        return std::vector<callbacks::CallbackPtr>{
            std::make_shared<callbacks::ModelSaver>(3),
            std::make_shared<callbacks::PeriodicTrigger>(std::make_shared<callbacks::ModelSaver>(0), 2)};
      },
      8, 2);
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
  faults->trigger_epoch = [&](callbacks::TrainerView& t) { saved = t.variable("fc0/W"); };
  faults->trigger_step = [&](callbacks::TrainerView& t) {
    if (t.global_step() == 5) trainer.towers().session(1).device().queues().simulate_loss();
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
