// Predictors: OfflinePredictor, built from a checkpoint in a graph of its own, computes
// what the trainer's inference tower computes and says what is missing; its batched
// predict() and calls from several threads give what one call at a time gives; on
// several devices (MultiTowerOfflinePredictor, DataParallelOfflinePredictor,
// MultiThreadAsyncPredictor) and over a DataFlow (SimpleDatasetPredictor) the results
// are the single device's, in input order.
#include "train/predictor.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <thread>

#include "callbacks/saver.h"
#include "core/error.h"
#include "dataflow/data_from_list.h"
#include "engine/vk/device.h"
#include "train/dataset_predictor.h"
#include "train/multi_predictor.h"
#include "train/tower_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

// A log directory with a checkpoint of the tiny model, trained once for the tests here.
const std::string& trained() {
  struct Trained {
    std::string dir = temp_dir("predictor");
    Trained() {
      train::TrainConfig config = tiny_config(4, 2);
      config.logger_dir = dir;
      config.callbacks = {std::make_shared<callbacks::ModelSaver>()};
      train::SimpleTrainer trainer(device(), 2);
      train::launch_train_with_config(std::move(config), trainer);
    }
    ~Trained() { std::filesystem::remove_all(dir); }
  };
  static const Trained t;
  return t.dir;
}

train::PredictConfig logits_config() { return {std::make_shared<TinyModel>(), trained(), {"x"}, {"logits"}}; }

// Inputs {x} of the tiny model, `rows` rows each.
std::vector<std::vector<Array>> inputs_of(std::size_t count, std::int64_t rows, std::uint64_t seed) {
  std::vector<std::vector<Array>> out;
  for (const dataflow::Datapoint& dp : tiny_batches(count, rows, seed)) out.push_back({dp[0]});
  return out;
}

bool same_bits(const Array& a, const Array& b) {
  return a.shape() == b.shape() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

TEST(OfflinePredictor, MatchesTheTrainersInferenceTower) {
  const std::string dir = temp_dir("predictor-tower");
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

// Many inputs at once, of two shapes (a double-buffered program for each run of equal
// shapes), give what one call at a time gives, in order.
TEST(OfflinePredictor, PredictsManyInputsAsOneCallAtATime) {
  train::OfflinePredictor p(logits_config(), device());
  std::vector<std::vector<Array>> many = inputs_of(5, 9, 7);
  for (std::vector<Array>& small : inputs_of(2, 4, 8)) many.insert(many.begin() + 3, small);
  many.push_back(inputs_of(1, 9, 9)[0]);
  const std::vector<std::vector<Array>> got = p.predict(many);
  ASSERT_EQ(got.size(), many.size());
  for (std::size_t i = 0; i < many.size(); ++i) EXPECT_TRUE(same_bits(got[i][0], p(many[i])[0])) << "input " << i;
  std::vector<std::vector<Array>> wrong = inputs_of(2, 9, 10);
  wrong[1].push_back(wrong[1][0]);
  EXPECT_THROW(p.predict(wrong), Error);
}

TEST(OfflinePredictor, IsSafeToCallFromSeveralThreads) {
  train::OfflinePredictor p(logits_config(), device());
  const std::vector<std::vector<Array>> inputs = inputs_of(8, 6, 11);
  std::vector<Array> expected;
  for (const std::vector<Array>& in : inputs) expected.push_back(p(in)[0]);
  std::vector<std::thread> threads;
  std::vector<int> wrong(4, 0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      for (int round = 0; round < 10; ++round) {
        const std::size_t i = static_cast<std::size_t>(t * 3 + round) % inputs.size();
        if (!same_bits(p(inputs[i])[0], expected[i])) ++wrong[static_cast<std::size_t>(t)];
      }
    });
  for (std::thread& t : threads) t.join();
  for (int t = 0; t < 4; ++t) EXPECT_EQ(wrong[static_cast<std::size_t>(t)], 0) << "thread " << t;
}

// Devices of their own (VkDevices of the test's physical device), one per tower.
class PredictorDevices : public ::testing::Test {
 protected:
  std::vector<vk::Device*> devices(int count) {
    while (static_cast<int>(opened_.size()) < count)
      opened_.push_back(std::make_unique<vk::Device>(instance(), device_index(), device_options()));
    std::vector<vk::Device*> out;
    for (int k = 0; k < count; ++k) out.push_back(opened_[static_cast<std::size_t>(k)].get());
    return out;
  }
  std::vector<std::unique_ptr<vk::Device>> opened_;
};

TEST_F(PredictorDevices, MultiTowerGivesEachDeviceAPredictor) {
  train::MultiTowerOfflinePredictor towers(logits_config(), devices(2));
  train::OfflinePredictor one(logits_config(), device());
  ASSERT_EQ(towers.size(), 2);
  EXPECT_EQ(&towers.predictor(2), &towers.predictor(0));  // wraps, as tensorpack's get_predictor
  const std::vector<Array> in = inputs_of(1, 7, 12)[0];
  for (int k = 0; k < 2; ++k) EXPECT_TRUE(same_bits(towers.predictor(k)(in)[0], one(in)[0])) << "tower " << k;
  EXPECT_EQ(towers.predictors().size(), 2u);
}

// The rows of one batch cut over 2 or 3 devices come back joined in their order, as one
// device computes them (each row's logits depend on that row only).
TEST_F(PredictorDevices, DataParallelCutsTheBatchOverDevicesAndKeepsItsOrder) {
  train::OfflinePredictor one(logits_config(), device());
  for (int count : {2, 3}) {
    train::DataParallelOfflinePredictor parallel(logits_config(), devices(count));
    for (std::int64_t rows : {11, 2, 1}) {
      const std::vector<Array> in = inputs_of(1, rows, 13 + static_cast<std::uint64_t>(rows))[0];
      const Array want = one(in)[0], got = parallel(in)[0];
      ASSERT_EQ(got.shape(), want.shape()) << count << " devices, " << rows << " rows";
      for (std::size_t i = 0; i < want.data<float>().size(); ++i)
        EXPECT_NEAR(got.data<float>()[i], want.data<float>()[i], 1e-6)
            << count << " devices, " << rows << " rows, " << i;
    }
  }
  train::DataParallelOfflinePredictor parallel(logits_config(), devices(2));
  EXPECT_THROW(parallel({}), Error);
}

TEST_F(PredictorDevices, MultiThreadAsyncPredictorAnswersEveryTaskInItsFuture) {
  train::MultiTowerOfflinePredictor towers(logits_config(), devices(2));
  train::OfflinePredictor one(logits_config(), device());
  const std::vector<std::vector<Array>> inputs = inputs_of(12, 5, 14);
  std::vector<std::future<std::vector<Array>>> futures;
  {
    train::MultiThreadAsyncPredictor async(towers.predictors());
    for (const std::vector<Array>& in : inputs) futures.push_back(async.put_task(in));
    std::future<std::vector<Array>> bad = async.put_task({});
    EXPECT_THROW(bad.get(), Error);
  }  // every task put is finished before the threads stop
  for (std::size_t i = 0; i < inputs.size(); ++i)
    EXPECT_TRUE(same_bits(futures[i].get()[0], one(inputs[i])[0])) << "task " << i;
}

std::string read_all(std::FILE* f) {
  std::rewind(f);
  std::string text;
  for (int c; (c = std::fgetc(f)) != EOF;) text.push_back(static_cast<char>(c));
  return text;
}

// A DataFlow of 13 datapoints through a predictor, 4 at a time: every result in order,
// the progress bar's last line in the stream given; on one device and on two.
TEST_F(PredictorDevices, SimpleDatasetPredictorRunsADataFlowInOrderWithAProgressBar) {
  train::OfflinePredictor one(logits_config(), device());
  const std::vector<std::vector<Array>> inputs = inputs_of(13, 6, 15);
  for (int count : {1, 2}) {
    std::shared_ptr<train::PredictorBase> predictor;
    if (count == 1)
      predictor = std::make_shared<train::OfflinePredictor>(logits_config(), device());
    else
      predictor = std::make_shared<train::DataParallelOfflinePredictor>(logits_config(), devices(2));
    std::FILE* progress = std::tmpfile();
    train::SimpleDatasetPredictor dataset(predictor, std::make_unique<dataflow::DataFromList>(inputs, false), progress,
                                          4);
    const std::vector<std::vector<Array>> got = dataset.get_all_result();
    ASSERT_EQ(got.size(), inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      const Array want = one(inputs[i])[0];
      for (std::size_t j = 0; j < want.data<float>().size(); ++j)
        ASSERT_NEAR(got[i][0].data<float>()[j], want.data<float>()[j], 1e-6) << "datapoint " << i << " on " << count;
    }
    EXPECT_NE(read_all(progress).find("Predicting [13/13] 100% |####################|"), std::string::npos)
        << read_all(progress);
    std::fclose(progress);
  }
  std::vector<std::vector<Array>> two_components = inputs_of(3, 6, 16);
  two_components[2].push_back(two_components[2][0]);
  train::SimpleDatasetPredictor wrong(logits_config(), std::make_unique<dataflow::DataFromList>(two_components, false),
                                      device(), nullptr);
  try {
    wrong.get_all_result();
    ADD_FAILURE() << "a datapoint of two components was fed to a predictor of one input";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("datapoint 2 has 2 components"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
