// GAN training on a one-dimensional GAN (real samples around 3; the generator maps
// 2-D noise to a number): a step updates the discriminator, then the generator through
// the updated discriminator, exactly as a reference computes by hand from gradients; the
// periods of SeparateGANTrainer hold; the generator learns the data's mean; and a
// crashed and resumed run ends bit for bit where an uninterrupted one does.
#include "train/gan.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "callbacks/saver.h"
#include "core/error.h"
#include "core/rng.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "gan_fixtures.h"
#include "max_difference.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

train::TrainConfig gan_config(std::shared_ptr<OneDimGan> model, int steps, int epochs, std::int64_t batch = kBatch) {
  train::TrainConfig config;
  config.model = std::move(model);
  config.data =
      std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(batches(steps, batch), false));
  config.max_epoch = epochs;
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  return config;
}

const std::string& var_name(const Tensor& v) { return std::get<VariableAttrs>(v.node().attrs).var_name; }

TEST(GANTrainer, AStepUpdatesTheDiscriminatorThenTheGeneratorThroughIt) {
  auto model = std::make_shared<OneDimGan>(false);
  train::GANTrainer trainer(device(), model, 5);
  train::launch_train_with_config(gan_config(model, 1, 1), trainer);
  EXPECT_EQ(trainer.g_vars().size(), 4u);
  EXPECT_EQ(trainer.d_vars().size(), 4u);

  // By hand: D1 = D0 - lr dD(d_loss) at (G0, D0); G1 = G0 - lr dG(g_loss) at (G0, D1).
  Graph g(5);
  auto reference = std::make_shared<OneDimGan>(false);
  std::vector<Tensor> in;
  for (const train::InputSpec& s : reference->inputs()) in.push_back(placeholder(g, s.name, s.type));
  {
    TowerContext training(g, "", 0, true);
    reference->build_graph(in);
  }
  std::vector<Tensor> gv, dv;
  for (const Tensor& v : g.trainable_variables()) (var_name(v).rfind("gen/", 0) == 0 ? gv : dv).push_back(v);
  Session s(g, device());
  const dataflow::Datapoint batch = batches(1)[0];
  const Feeds feeds{{in[0], batch[0]}, {in[1], batch[1]}};
  const auto step = [&](const std::vector<Tensor>& vars, Tensor loss) {
    const std::vector<Array> grads = s.run(feeds, gradients(loss, vars));
    std::map<std::string, Array> after;
    for (std::size_t i = 0; i < vars.size(); ++i) {
      Array v = s.variable(var_name(vars[i]));
      for (std::size_t j = 0; j < v.data<float>().size(); ++j) v.data<float>()[j] -= 0.05f * grads[i].data<float>()[j];
      after.emplace(var_name(vars[i]), v);
    }
    return after;
  };
  const std::map<std::string, Array> g_first = step(gv, reference->g_loss());  // the wrong order, for contrast
  const std::map<std::string, Array> d1 = step(dv, reference->d_loss());
  for (const auto& [name, value] : d1) s.set_variable(name, value);
  const std::map<std::string, Array> g1 = step(gv, reference->g_loss());
  for (const auto& [name, value] : d1) EXPECT_LE(max_difference(trainer.variable(name), value), 1e-6f) << name;
  float contrast = 0;
  for (const auto& [name, value] : g1) {
    EXPECT_LE(max_difference(trainer.variable(name), value), 1e-6f) << name;
    contrast = std::max(contrast, max_difference(trainer.variable(name), g_first.at(name)));
  }
  EXPECT_GT(contrast, 1e-5f) << "the generator's update cannot tell the updated discriminator from the old";
}

TEST(GANTrainer, SeparateTrainerKeepsItsPeriods) {
  auto model = std::make_shared<OneDimGan>(false);
  train::SeparateGANTrainer trainer(device(), model, 5, 1, 2);
  std::vector<Array> gen, dis;
  auto look = std::make_shared<Hooks>();
  const auto record = [&](callbacks::TrainerView& t) {
    gen.push_back(t.variable("gen/fc0/W"));
    dis.push_back(t.variable("discrim/fc0/W"));
  };
  look->before_epoch = record;
  look->trigger_step = record;
  train::TrainConfig config = gan_config(model, 4, 1);
  config.callbacks = {look};
  train::launch_train_with_config(std::move(config), trainer);
  ASSERT_EQ(gen.size(), 5u);
  // Steps at global step 0 .. 3: the generator trains at 0 and 2, the discriminator always.
  const std::vector<bool> g_moved{true, false, true, false};
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(max_difference(gen[i + 1], gen[i]) > 0, g_moved[i]) << "generator at global step " << i;
    EXPECT_GT(max_difference(dis[i + 1], dis[i]), 0.0f) << "discriminator at global step " << i;
  }
}

double mean_of_fakes(train::Trainer& trainer) {
  const dataflow::Datapoint b = batches(1)[0];
  Graph& g = trainer.graph();
  const Array fake = trainer.session().run({{g.find("real"), b[0]}, {g.find("z"), b[1]}}, {g.find("gen/fake")})[0];
  double sum = 0;
  for (float v : fake.data<float>()) sum += v;
  return sum / kBatch;
}

// Mixed precision as a user asks for it (TrainConfig::mixed_precision), at a batch whose
// hidden activations are large enough to be stored as float16 (kMinF16Elements): both
// nets train as in float32 within float16's rounding (the runs do differ), at the
// initial scale with no step skipped, and each net's statistics reach the monitors.
constexpr std::int64_t kWideBatch = 256;

TEST(GANTrainer, MixedPrecisionTrainsBothNetsAsFloat32WithinFloat16Rounding) {
  auto reference_model = std::make_shared<OneDimGan>(true, kWideBatch);
  train::GANTrainer reference(device(), reference_model, 5);
  train::launch_train_with_config(gan_config(reference_model, 6, 1, kWideBatch), reference);
  auto model = std::make_shared<OneDimGan>(true, kWideBatch);
  train::GANTrainer trainer(device(), model, 5);
  train::TrainConfig config = gan_config(model, 6, 1, kWideBatch);
  config.mixed_precision = true;
  train::launch_train_with_config(std::move(config), trainer);
  float largest = 0;
  for (const Tensor& v : reference.graph().trainable_variables()) {
    const Array want = reference.variable(var_name(v)), got = trainer.variable(var_name(v));
    float scale = 0;
    for (float x : want.data<float>()) scale = std::max(scale, std::abs(x));
    const float difference = max_difference(got, want);
    EXPECT_LE(difference, 2e-2f * scale) << var_name(v);
    largest = std::max(largest, difference);
  }
  EXPECT_GT(largest, 0.0f) << "the mixed-precision run computed float32 bit for bit";
  for (const char* net : {train::kDiscriminatorLossScale, train::kGeneratorLossScale}) {
    EXPECT_EQ(trainer.variable(std::string(net) + "/scale").data<float>()[0], 32768.0f) << net;
    EXPECT_EQ(trainer.variable(std::string(net) + "/skipped_steps").data<float>()[0], 0.0f) << net;
  }
  for (const char* statistic : {"d_loss_scale", "d_skipped_steps", "g_loss_scale", "g_skipped_steps"})
    EXPECT_FALSE(trainer.monitors().get_history(statistic).empty()) << statistic;
}

// A scale no float16 activation gradient survives (2^30: the hidden layers' gradients
// pass 65504): every update that runs overflows and is skipped, and each net's scale
// halves on its own steps only. With the generator every second step
// (SeparateGANTrainer), after 3 steps the discriminator skipped 3 and halved thrice, the
// generator skipped 2 (steps 0 and 2) and halved twice; no variable moved.
TEST(GANTrainer, AnOverflowSkipsThatNetsUpdateAndHalvesItsOwnScale) {
  auto model = std::make_shared<OneDimGan>(false, kWideBatch);
  train::SeparateGANTrainer trainer(device(), model, 5, 1, 2);
  constexpr float kScale = 1073741824.0f;  // 2^30
  trainer.enable_mixed_precision({.initial_scale = kScale, .growth_interval = 100, .max_scale = kScale});
  std::map<std::string, Array> before;
  auto look = std::make_shared<Hooks>();
  look->before_epoch = [&](callbacks::TrainerView& t) {
    for (const char* name : {"gen/fc0/W", "discrim/fc0/W"}) before[name] = t.variable(name);
  };
  train::TrainConfig config = gan_config(model, 3, 1, kWideBatch);
  config.callbacks = {look};
  train::launch_train_with_config(std::move(config), trainer);
  const auto value = [&](const std::string& name) { return trainer.variable(name).data<float>()[0]; };
  EXPECT_EQ(value("d_loss_scale/scale"), kScale / 8);
  EXPECT_EQ(value("d_loss_scale/skipped_steps"), 3.0f);
  EXPECT_EQ(value("g_loss_scale/scale"), kScale / 4);
  EXPECT_EQ(value("g_loss_scale/skipped_steps"), 2.0f);
  for (const auto& [name, was] : before) EXPECT_EQ(max_difference(trainer.variable(name), was), 0.0f) << name;
}

TEST(GANTrainer, TheGeneratorLearnsTheDatasMean) {
  auto model = std::make_shared<OneDimGan>(true);
  train::GANTrainer trainer(device(), model, 7);
  double before = 0;
  auto look = std::make_shared<Hooks>();
  look->before_epoch = [&](callbacks::TrainerView&) {
    if (before == 0) before = mean_of_fakes(trainer);
  };
  train::TrainConfig config = gan_config(model, 50, 8);  // 400 steps
  config.callbacks = {look};
  train::launch_train_with_config(std::move(config), trainer);
  const double after = mean_of_fakes(trainer);
  std::printf("mean of 16 generated samples: %.3f before training, %.3f after 400 steps (data: 3)\n", before, after);
  EXPECT_GT(std::abs(before - 3.0), 2.0) << before;
  EXPECT_LT(std::abs(after - 3.0), 0.5) << "from " << before;
}

TEST(GANTrainer, ACrashedAndResumedRunEqualsAnUninterruptedOne) {
  const std::string a = temp_dir("gan-a"), b = temp_dir("gan-b");
  const auto config_for = [](const std::string& dir, std::shared_ptr<OneDimGan> model,
                             std::vector<callbacks::CallbackPtr> extra) {
    train::TrainConfig config = gan_config(std::move(model), 3, 4);
    config.logger_dir = dir;
    config.callbacks = {std::make_shared<callbacks::ModelSaver>(3)};
    config.callbacks.insert(config.callbacks.end(), extra.begin(), extra.end());
    return config;
  };
  auto model = std::make_shared<OneDimGan>(true);
  train::GANTrainer whole(device(), model, 3);
  train::launch_train_with_config(config_for(a, model, {}), whole);
  {
    auto m = std::make_shared<OneDimGan>(true);
    train::GANTrainer first(device(), m, 3);
    EXPECT_THROW(train::launch_train_with_config(config_for(b, m, {std::make_shared<CrashAt>(8)}), first), Error);
  }
  auto m = std::make_shared<OneDimGan>(true);
  train::GANTrainer resumed(device(), m, 3);
  train::launch_train_with_config(train::AutoResumeTrainConfig(config_for(b, m, {})), resumed);
  expect_same_gan_state(whole, resumed);
  std::filesystem::remove_all(a);
  std::filesystem::remove_all(b);
}

}  // namespace
}  // namespace vkp::test
