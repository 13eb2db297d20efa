// The picture callbacks in a real training run: DumpTensorAsImage writes the last step's
// images as a PNG grid into the log directory (read back: each cell holds its image), and
// ParamHistograms reports a variable's root mean square as it stands; add_activation_summary's
// activations are summarised from the last step of each epoch only, with the values that
// step computed (checked against the activation recomputed on the host from that step's
// batch and weights), on one device with and without staging and on two towers.
#include "callbacks/pictures.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "callbacks/monitors.h"
#include "callbacks/summary.h"
#include "core/image_file.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/variables.h"
#include "train/multi_device_trainer.h"
#include "train/tower_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

// Images x [N, 3, 4, 1] in [0, 1]; one weight w fitted so that x w = 1 on average.
class ImagesModel : public train::ModelDesc {
 public:
  std::vector<train::InputSpec> inputs() const override { return {{"x", f32({kUnknown, 3, 4, 1})}}; }
  Tensor build_graph(const std::vector<Tensor>& in) override {
    identity(in[0], "images");
    const Tensor w = get_variable(in[0].graph(), "w", {1}, constant(0.5f));
    return reduce_mean(square(in[0] * w + (-1.0f)));
  }
  Optimizer optimizer(Graph& g) override { return sgd(g, 0.1f); }
};

std::vector<dataflow::Datapoint> image_batches(int count = 3) {
  std::vector<dataflow::Datapoint> out;
  for (int b = 0; b < count; ++b) {
    Array x(DType::f32, Shape{4, 3, 4, 1});
    for (std::size_t i = 0; i < 48; ++i) x.data<float>()[i] = static_cast<float>((i * 7 + static_cast<std::size_t>(b) * 13) % 50) / 49.0f;
    out.push_back({x});
  }
  return out;
}

TEST(Pictures, DumpTensorAsImageWritesTheLastStepsImagesAndParamHistogramsTheRms) {
  const std::string dir = temp_dir("pictures");
  const std::vector<dataflow::Datapoint> batches = image_batches();
  train::TrainConfig config;
  config.model = std::make_shared<ImagesModel>();
  config.data = std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(batches, false));
  config.max_epoch = 1;
  config.logger_dir = dir;
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  auto dump = std::make_shared<callbacks::DumpTensorAsImage>("images", "", 2, 2);
  config.callbacks = {dump, std::make_shared<callbacks::ParamHistograms>(std::vector<std::string>{"w"})};
  train::SimpleTrainer trainer(device(), 1);
  train::launch_train_with_config(std::move(config), trainer);

  ASSERT_EQ(dump->last_written(), dir + "/images-3.png");
  const Array grid = vkp::read_image(dump->last_written());
  ASSERT_EQ(grid.shape().dims(), (std::vector<std::int64_t>{7, 9, 1}));  // 2 x 2 cells of 3 x 4, 1-pixel gaps
  const Array& last = batches.back()[0];
  for (int k = 0; k < 4; ++k)
    for (int y = 0; y < 3; ++y)
      for (int x = 0; x < 4; ++x) {
        const float v = last.data<float>()[static_cast<std::size_t>((k * 3 + y) * 4 + x)];
        const int gy = (k / 2) * 4 + y, gx = (k % 2) * 5 + x;
        EXPECT_EQ(int(grid.data<std::uint8_t>()[static_cast<std::size_t>(gy * 9 + gx)]), int(std::lround(v * 255)))
            << "image " << k << " (" << y << ", " << x << ")";
      }
  const float w = trainer.variable("w").data<float>()[0];
  EXPECT_NE(w, 0.5f) << "training moved nothing";
  EXPECT_NEAR(trainer.monitors().get_latest("param-summary/w-rms"), std::abs(w), 1e-7);
  std::filesystem::remove_all(dir);
}

// x [N, 3, 4, 1]; the activation relu(x w - 0.3) [N, 3, 4, 1], summarised; w fitted so
// that the activations' mean is 1.
class ActivationModel : public train::ModelDesc {
 public:
  std::vector<train::InputSpec> inputs() const override { return {{"x", f32({kUnknown, 3, 4, 1})}}; }
  Tensor build_graph(const std::vector<Tensor>& in) override {
    const Tensor w = get_variable(in[0].graph(), "w", {1}, constant(0.5f));
    const Tensor act = callbacks::add_activation_summary(identity(relu(in[0] * w + (-0.3f)), "act"));
    return square(reduce_mean(act) + (-1.0f));
  }
  Optimizer optimizer(Graph& g) override { return sgd(g, 0.5f); }
};

// The summaries the trainer reported, one per epoch, against relu(x w - 0.3) of each
// epoch's last step's batch (tower 0's: the first of the step's batches) and of w before
// that step's update. An epoch is one pass over `batches`, `towers` batches a step.
void expect_summaries_of_last_steps(train::TowerTrainer& trainer, const std::vector<dataflow::Datapoint>& batches,
                                    bool staged, int towers) {
  const auto steps = static_cast<std::int64_t>(batches.size()) / towers;
  std::vector<float> w_before_last;
  auto look = std::make_shared<Hooks>();
  look->before_run = [&](callbacks::TrainerView& t) {
    if (t.local_step() == steps - 1) w_before_last.push_back(t.variable("w").data<float>()[0]);
  };
  train::TrainConfig config;
  config.model = std::make_shared<ActivationModel>();
  train::InputSourcePtr input = std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(batches, false));
  if (staged) input = std::make_shared<train::StagingInput>(input);
  config.data = input;
  config.steps_per_epoch = steps;
  config.max_epoch = 2;
  config.callbacks = {look};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  train::launch_train_with_config(std::move(config), trainer);

  const auto& rms = trainer.monitors().get_history("activation-summary/act-rms");
  const auto& sparsity = trainer.monitors().get_history("activation-summary/act-sparsity");
  ASSERT_EQ(rms.size(), 2u) << "one summary an epoch";
  ASSERT_EQ(sparsity.size(), 2u);
  ASSERT_EQ(w_before_last.size(), 2u);
  const Array& x = batches[batches.size() - static_cast<std::size_t>(towers)][0];
  for (std::size_t e = 0; e < 2; ++e) {
    EXPECT_EQ(rms[e].first, static_cast<std::int64_t>(e + 1) * steps) << "reported at the epoch's last step";
    double squares = 0, zeros = 0;
    for (float v : x.data<float>()) {
      const float a = std::max(0.0f, v * w_before_last[e] - 0.3f);
      squares += static_cast<double>(a) * a;
      zeros += a == 0.0f;
    }
    EXPECT_NEAR(rms[e].second, std::sqrt(squares / 48), 1e-6) << "epoch " << e + 1;
    EXPECT_NEAR(sparsity[e].second, zeros / 48, 1e-12) << "epoch " << e + 1;
    EXPECT_GT(zeros, 0) << "the test needs some zeros";
  }
  EXPECT_NE(w_before_last[0], w_before_last[1]) << "training moved nothing";
}

TEST(ActivationSummaries, SummariseTheLastStepOfEachEpoch) {
  train::SimpleTrainer trainer(device(), 1);
  expect_summaries_of_last_steps(trainer, image_batches(3), false, 1);
}

TEST(ActivationSummaries, SummariseTheLastStepWhenInputsAreStaged) {
  train::SimpleTrainer trainer(device(), 1);
  expect_summaries_of_last_steps(trainer, image_batches(3), true, 1);
}

TEST(ActivationSummaries, SummariseTowerZerosBatchOnTwoTowers) {
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 1, device_options());
  expect_summaries_of_last_steps(trainer, image_batches(4), false, 2);
}

TEST(ActivationSummaries, SummariseTowerZerosBatchOnStagedTowers) {
  train::SyncMultiDeviceTrainerReplicated trainer(instance(), {device_index(), device_index()}, 1, device_options());
  expect_summaries_of_last_steps(trainer, image_batches(4), true, 2);
}

}  // namespace
}  // namespace vkp::test
