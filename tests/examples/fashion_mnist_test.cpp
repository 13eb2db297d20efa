// The bundled example learns: a short seeded run of each model on real Fashion-MNIST
// lowers the cost, and the MLP beats chance by far on test images it never saw.
#include <gtest/gtest.h>

#include <cstdio>
#include <numeric>

#include "models.h"
#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/inference_runner.h"
#include "dataflow/fixed_size_data.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

struct RunResult {
  std::vector<double> costs;
  double test_accuracy = 0;
};

// Costs of every step of `steps` steps, and the accuracy on the first `test_batches`
// test batches afterwards.
RunResult train_example(examples::Architecture arch, std::int64_t steps, std::int64_t batch, std::size_t test_batches) {
  auto costs = std::make_shared<std::vector<double>>();
  auto recorder = std::make_shared<Hooks>();
  train::TrainConfig config;
  config.model = std::make_shared<examples::FashionMnistModel>(arch, 1e-3f);
  config.data = std::make_shared<train::FeedInput>(examples::fashion_mnist_batches(true, batch, 7));
  config.steps_per_epoch = steps;
  config.max_epoch = 1;
  config.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  config.monitors = std::vector<callbacks::MonitorPtr>{};
  config.callbacks = {std::make_shared<callbacks::InferenceRunner>(
      std::make_unique<dataflow::FixedSizeData>(examples::fashion_mnist_batches(false, 100, 0), test_batches, false),
      std::vector<callbacks::InferencerPtr>{std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"accuracy"})})};
  train::SimpleTrainer trainer(device(), 7);
  recorder->trigger_step = [costs, &trainer](callbacks::TrainerView&) { costs->push_back(trainer.last_cost()); };
  config.callbacks.push_back(recorder);
  train::launch_train_with_config(std::move(config), trainer);
  RunResult r{*costs, trainer.monitors().get_latest("validation_accuracy")};
  std::printf("cost: first step %.3f, last step %.3f; test accuracy %.3f\n", r.costs.front(), r.costs.back(),
              r.test_accuracy);
  return r;
}

double mean(const std::vector<double>& v, std::size_t from, std::size_t to) {
  return std::accumulate(v.begin() + static_cast<std::ptrdiff_t>(from), v.begin() + static_cast<std::ptrdiff_t>(to), 0.0) /
         static_cast<double>(to - from);
}

TEST(FashionMnistExample, MlpLearns) {
  const RunResult r = train_example(examples::Architecture::mlp, 60, 64, 10);
  ASSERT_EQ(r.costs.size(), 60u);
  // Chance is a cost of ln 10 = 2.30 and an accuracy of 0.1.
  EXPECT_GT(mean(r.costs, 0, 5), 1.5);
  EXPECT_LT(mean(r.costs, 50, 60), 0.5 * mean(r.costs, 0, 5));
  EXPECT_GT(r.test_accuracy, 0.7);
}

TEST(FashionMnistExample, ConvnetLearns) {
  const RunResult r = train_example(examples::Architecture::convnet, 20, 32, 2);
  ASSERT_EQ(r.costs.size(), 20u);
  EXPECT_LT(mean(r.costs, 15, 20), 0.75 * mean(r.costs, 0, 5));
  EXPECT_GT(r.test_accuracy, 0.5);
}

}  // namespace
}  // namespace vkp::test
