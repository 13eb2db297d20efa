// The picture callbacks in a real training run: DumpTensorAsImage writes the last step's
// images as a PNG grid into the log directory (read back: each cell holds its image), and
// ParamHistograms reports a variable's root mean square as it stands.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "vkpack/callbacks/monitors.h"
#include "vkpack/callbacks/pictures.h"
#include "vkpack/dataflow/data_from_list.h"
#include "vkpack/dataflow/image_file.h"
#include "vkpack/engine/graph/ops.h"
#include "vkpack/engine/graph/optimizer.h"
#include "vkpack/engine/graph/variables.h"
#include "vkpack/train/tower_trainer.h"

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

std::vector<dataflow::Datapoint> image_batches() {
  std::vector<dataflow::Datapoint> out;
  for (int b = 0; b < 3; ++b) {
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
  const Array grid = dataflow::read_image(dump->last_written());
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

}  // namespace
}  // namespace vkp::test
