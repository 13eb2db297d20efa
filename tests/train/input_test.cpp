// Input sources: feeding, a queue thread and staging double buffers all train the same
// variables from the same batches; a failing dataflow stops training with its error;
// DummyConstantInput trains on one fixed batch.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/graph/variables.h"
#include "train/tower_trainer.h"

namespace vkp::test {
namespace {

std::vector<Array> train_variables(train::InputSourcePtr source, int epochs = 2, vk::Device* on = nullptr) {
  train::TrainConfig config = tiny_config(5, epochs);
  config.data = std::move(source);
  train::SimpleTrainer trainer(on ? *on : device(), 4);
  train::launch_train_with_config(std::move(config), trainer);
  std::vector<Array> out;
  for (const graph::Tensor& v : trainer.graph().variables())
    out.push_back(trainer.session().variable(std::get<graph::VariableAttrs>(v.node().attrs).var_name));
  return out;
}

void expect_same(const std::vector<Array>& a, const std::vector<Array>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    EXPECT_EQ(0, std::memcmp(a[i].bytes().data(), b[i].bytes().data(), a[i].nbytes())) << "variable " << i;
}

TEST(InputSources, FeedQueueAndStagingTrainTheSameVariables) {
  const std::vector<Array> fed = train_variables(std::make_shared<train::FeedInput>(tiny_flow(5)));
  expect_same(fed, train_variables(std::make_shared<train::QueueInput>(tiny_flow(5), 3)));
  expect_same(fed, train_variables(std::make_shared<train::StagingInput>(std::make_shared<train::FeedInput>(tiny_flow(5)))));
  expect_same(fed, train_variables(std::make_shared<train::StagingInput>(std::make_shared<train::QueueInput>(tiny_flow(5)))));
}

// On a device that reaches its memory through staging copies and has a transfer queue
// (here the compute family standing in, as lavapipe has no transfer-only family),
// StagingInput uploads each next batch on the transfer queue while the step computes,
// and the step waits for it on the device: the same variables as feeding.
TEST(InputSources, StagingInputUploadsOnTheTransferQueue) {
  vk::DeviceOptions o = device_options();
  o.memory = vk::MemoryMode::staged;
  o.transfer_queue = vk::TransferQueue::stand_in;
  vk::Device dev(instance(), device_index(), o);
  ASSERT_TRUE(dev.queues().has_transfer_queue());
  const std::vector<Array> fed = train_variables(std::make_shared<train::FeedInput>(tiny_flow(5)), 2, &dev);
  EXPECT_EQ(dev.queues().transfer_submissions(), 0u) << "feeding records its copies into the step";
  const std::vector<Array> staged =
      train_variables(std::make_shared<train::StagingInput>(std::make_shared<train::QueueInput>(tiny_flow(5))), 2, &dev);
  expect_same(fed, staged);
  EXPECT_GE(dev.queues().transfer_submissions(), 10u) << "one upload a step";
}

// The same on a device's own transfer-only queue family (TransferQueue::automatic, as a
// discrete GPU opens by default): the copies and the step on two families, ordered only
// by the timeline semaphores (the staging buffers are shared by both families).
TEST(InputSources, StagingInputUploadsOnATransferOnlyFamily) {
  vk::DeviceOptions o = device_options();
  o.memory = vk::MemoryMode::staged;
  o.transfer_queue = vk::TransferQueue::automatic;
  vk::Device dev(instance(), device_index(), o);
  if (!dev.queues().has_transfer_queue()) GTEST_SKIP() << dev.label() << " has no transfer-only queue family";
  ASSERT_TRUE(dev.queues().transfer_queue_is_separate());
  const std::vector<Array> fed = train_variables(std::make_shared<train::FeedInput>(tiny_flow(5)), 2, &dev);
  const std::vector<Array> staged = train_variables(
      std::make_shared<train::StagingInput>(std::make_shared<train::QueueInput>(tiny_flow(5))), 2, &dev);
  expect_same(fed, staged);
  EXPECT_GE(dev.queues().transfer_submissions(), 10u) << "one upload a step";
}

// Gives `good` datapoints, then fails.
class FailingFlow : public dataflow::DataFlow {
 public:
  explicit FailingFlow(std::size_t good) : batches_(tiny_batches(good)) {}
  std::optional<std::size_t> size() const override { return 10; }

 protected:
  void on_start_epoch() override { at_ = 0; }
  std::optional<dataflow::Datapoint> on_next() override {
    if (at_ == batches_.size()) throw Error(ErrorCode::io, "the disk went away");
    return batches_[at_++];
  }

 private:
  std::vector<dataflow::Datapoint> batches_;
  std::size_t at_ = 0;
};

TEST(InputSources, QueueInputPassesOnTheDataflowsError) {
  train::TrainConfig config = tiny_config(10, 1);
  config.data = std::make_shared<train::QueueInput>(std::make_unique<FailingFlow>(4), 2);
  train::SimpleTrainer trainer(device());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    FAIL() << "the dataflow's error was lost";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("the disk went away"), std::string::npos) << e.what();
  }
  EXPECT_EQ(trainer.global_step(), 4);
}

TEST(InputSources, DummyConstantInputRepeatsOneBatch) {
  train::TrainConfig config = tiny_config(1, 1);
  config.data = std::make_shared<train::DummyConstantInput>(std::vector<Shape>{Shape{7, 6}, Shape{7}}, 3, 8);
  config.steps_per_epoch = 3;
  train::SimpleTrainer trainer(device());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(trainer.samples_per_step(), 7);
  EXPECT_EQ(trainer.global_step(), 3);
  EXPECT_TRUE(std::isfinite(trainer.last_cost()));
}

TEST(InputSources, DummyConstantInputChecksItsShapes) {
  train::TrainConfig config = tiny_config(1, 1);
  config.data = std::make_shared<train::DummyConstantInput>(std::vector<Shape>{Shape{7, 5}, Shape{7}});
  config.steps_per_epoch = 1;
  train::SimpleTrainer trainer(device());
  EXPECT_THROW(train::launch_train_with_config(std::move(config), trainer), Error);
}

}  // namespace
}  // namespace vkp::test
