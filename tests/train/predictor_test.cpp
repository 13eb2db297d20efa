// OfflinePredictor, built from a checkpoint in a graph of its own, computes what the
// trainer's inference tower computes, and says what is missing.
#include <gtest/gtest.h>

#include <filesystem>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/saver.h"
#include "core/error.h"
#include "train/predictor.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

TEST(OfflinePredictor, MatchesTheTrainersInferenceTower) {
  const std::string dir = temp_dir("predictor");
  train::TrainConfig config = tiny_config(4, 2);
  config.logger_dir = dir;
  config.callbacks = {std::make_shared<callbacks::ModelSaver>()};
  train::SimpleTrainer trainer(device(), 2);
  train::launch_train_with_config(std::move(config), trainer);

  const callbacks::PredictFn online = trainer.predictor({"x"}, {"logits"});
  train::OfflinePredictor offline(std::make_shared<TinyModel>(), dir, device(), {"x"}, {"logits"});
  for (const dataflow::Datapoint& dp : tiny_batches(3, 9, 123)) {
    const Array a = online({dp[0]})[0], b = offline({dp[0]})[0];
    ASSERT_EQ(a.shape().dims(), (std::vector<std::int64_t>{9, 3}));
    ASSERT_EQ(b.shape().dims(), a.shape().dims());
    for (int i = 0; i < 27; ++i) EXPECT_FLOAT_EQ(a.data<float>()[i], b.data<float>()[i]) << i;
  }
  EXPECT_THROW(offline({}), Error);
  EXPECT_THROW(train::OfflinePredictor(std::make_shared<TinyModel>(), dir, device(), {"y"}, {"logits"}), Error);
  // A model with wider layers cannot take these variables.
  EXPECT_THROW(train::OfflinePredictor(std::make_shared<TinyModel>(16), dir, device(), {"x"}, {"logits"}), Error);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
