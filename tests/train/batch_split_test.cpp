// Sharing a synchronous step's global batch between towers (train/batch_split.h): the
// rows follow the shares, the cut keeps the rows' order, fixed shares train like one
// tower on the whole batch, and shares measured by throughput are recorded each epoch
// and repeated by a resumed run.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <numeric>

#include <nlohmann/json.hpp>

#include "train_fixtures.h"
#include "vk_test_env.h"
#include "callbacks/monitors/json_writer.h"
#include "callbacks/saver.h"
#include "core/error.h"
#include "core/rng.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/optimizer.h"
#include "train/batch_split.h"
#include "train/input_source.h"
#include "train/multi_device_trainer.h"
#include "train/train_config.h"

namespace vkp::test {
namespace {

TEST(BatchSplit, RowsFollowTheSharesAndEveryTowerGetsOne) {
  EXPECT_EQ(train::split_rows(64, std::vector<double>{1, 3}), (std::vector<std::int64_t>{16, 48}));
  // Quotas of 3.33 each: the leftover row to the first of the ties.
  EXPECT_EQ(train::split_rows(10, std::vector<double>{1, 1, 1}), (std::vector<std::int64_t>{4, 3, 3}));
  // A quota under one row still gets one, from the largest part.
  EXPECT_EQ(train::split_rows(5, std::vector<double>{1, 1000}), (std::vector<std::int64_t>{1, 4}));
  // Random shares: every part within one row of its exact quota, plus one for each part
  // whose quota was under a row.
  Rng rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const auto parts = static_cast<std::size_t>(1 + rng.below(5));
    const auto rows = static_cast<std::int64_t>(parts + rng.below(300));
    std::vector<double> shares(parts);
    for (double& s : shares) s = 0.01 + std::abs(rng.normal());
    const double sum = std::accumulate(shares.begin(), shares.end(), 0.0);
    double small = 0;
    for (double s : shares) small += static_cast<double>(rows) * s / sum < 1 ? 1 : 0;
    const std::vector<std::int64_t> got = train::split_rows(rows, shares);
    ASSERT_EQ(std::accumulate(got.begin(), got.end(), std::int64_t{0}), rows);
    for (std::size_t k = 0; k < parts; ++k) {
      const double exact = static_cast<double>(rows) * shares[k] / sum;
      EXPECT_GE(got[k], 1);
      EXPECT_LT(std::abs(static_cast<double>(got[k]) - exact), 1.0 + small) << "trial " << trial << " tower " << k;
    }
  }
}

TEST(BatchSplit, ParsesItsThreeModes) {
  EXPECT_EQ(train::parse_batch_split("equal").mode, train::BatchSplit::Mode::equal);
  EXPECT_EQ(train::parse_batch_split("throughput").mode, train::BatchSplit::Mode::throughput);
  const train::BatchSplit fixed = train::parse_batch_split("1,2.5");
  EXPECT_EQ(fixed.mode, train::BatchSplit::Mode::fixed);
  EXPECT_EQ(fixed.shares, (std::vector<double>{1, 2.5}));
  for (const char* bad : {"", "fast", "1,", ",1", "1,-2", "1,0", "1,x", "1,inf"}) {
    try {
      train::parse_batch_split(bad);
      ADD_FAILURE() << "no error for '" << bad << "'";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("use equal, throughput, or one positive weight per tower"), std::string::npos)
          << e.what();
    }
  }
}

TEST(BatchSplit, BadSharesOrTooFewRowsAreErrorsNamingThem) {
  try {
    train::split_rows(1, std::vector<double>{1, 1});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("1 rows cannot give each of 2 towers one"), std::string::npos) << e.what();
  }
  EXPECT_THROW(train::split_rows(8, std::vector<double>{1, 0}), Error);
  EXPECT_THROW(train::split_rows(8, std::vector<double>{1, std::nan("")}), Error);
  EXPECT_THROW(train::split_rows(8, std::vector<double>{}), Error);
}

// Tower t's batch of `rows` datapoints: x f32 [rows, 2, 3] counting up from t * 1000,
// labels i32 [rows] the same row numbers.
std::vector<Array> numbered(int t, std::int64_t rows) {
  Array x(DType::f32, Shape{rows, 2, 3}), label(DType::i32, Shape{rows});
  for (std::int64_t i = 0; i < rows; ++i) {
    label.data<std::int32_t>()[static_cast<std::size_t>(i)] = t * 1000 + static_cast<std::int32_t>(i);
    for (int j = 0; j < 6; ++j) x.data<float>()[static_cast<std::size_t>(i * 6 + j)] = static_cast<float>(t * 1000 + i * 6 + j);
  }
  return {x, label};
}

TEST(BatchSplit, TheCutKeepsTheRowsInTowerOrder) {
  const std::vector<std::vector<Array>> batches{numbered(0, 5), numbered(1, 5), numbered(2, 5)};
  std::vector<float> all_x;
  std::vector<std::int32_t> all_labels;
  for (const auto& b : batches) {
    all_x.insert(all_x.end(), b[0].data<float>().begin(), b[0].data<float>().end());
    all_labels.insert(all_labels.end(), b[1].data<std::int32_t>().begin(), b[1].data<std::int32_t>().end());
  }
  std::vector<std::vector<Array>> out;
  const std::vector<std::int64_t> rows{2, 9, 4};
  train::resplit(batches, rows, out);
  ASSERT_EQ(out.size(), 3u);
  std::size_t row = 0;
  for (std::size_t p = 0; p < out.size(); ++p) {
    ASSERT_EQ(out[p][0].shape(), (Shape{rows[p], 2, 3}));
    ASSERT_EQ(out[p][1].shape(), (Shape{rows[p]}));
    for (std::int64_t i = 0; i < rows[p]; ++i, ++row) {
      EXPECT_EQ(out[p][1].data<std::int32_t>()[static_cast<std::size_t>(i)], all_labels[row]);
      for (int j = 0; j < 6; ++j)
        EXPECT_EQ(out[p][0].data<float>()[static_cast<std::size_t>(i * 6 + j)], all_x[row * 6 + static_cast<std::size_t>(j)]);
    }
  }
}

TEST(BatchSplit, BatchesThatCannotBeCutAreErrorsNamingTheInput) {
  std::vector<std::vector<Array>> out;
  std::vector<std::vector<Array>> bad{numbered(0, 4), numbered(1, 4)};
  bad[1][1] = Array(DType::i32, Shape{3});  // labels of 3 rows in a batch of 4
  try {
    train::resplit(bad, std::vector<std::int64_t>{4, 4}, out);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("input 1 of tower 1 is i32[3], whose first dimension is not the batch's 4 rows"),
              std::string::npos)
        << e.what();
  }
  bad = {numbered(0, 4), numbered(1, 4)};
  bad[1][0] = Array(DType::f32, Shape{4, 3, 2});
  EXPECT_THROW(train::resplit(bad, std::vector<std::int64_t>{4, 4}, out), Error);
  const std::vector<std::vector<Array>> good{numbered(0, 4), numbered(1, 4)};
  EXPECT_THROW(train::resplit(good, std::vector<std::int64_t>{4, 5}, out), Error);
}

// Tower 0 costs 100 ms a step plus 1 ms a row, tower 1 10 ms a row and nothing fixed.
double modelled(int tower, std::int64_t rows) {
  return tower == 0 ? 0.1 + 0.001 * static_cast<double>(rows) : 0.01 * static_cast<double>(rows);
}

TEST(BatchSplit, OneEpochSplitsBySamplesPerSecondTwoFindTheFixedCost) {
  train::StepTimeModel model;
  model.reset(2);
  EXPECT_FALSE(model.measured());
  EXPECT_THROW(model.end_epoch(), Error);
  // Epoch 1, equal: 500 rows each, 0.6 s and 5 s a step.
  for (int step = 0; step < 3; ++step)
    for (int k = 0; k < 2; ++k) model.add(k, 500, modelled(k, 500));
  ASSERT_TRUE(model.measured());
  model.end_epoch();
  EXPECT_NEAR(model.rates()[0], 500 / 0.6, 1e-9);
  EXPECT_NEAR(model.rates()[1], 100, 1e-9);
  EXPECT_EQ(model.fixed_seconds(0), 0);  // one point: no fixed cost to see
  // Proportional to 833 and 100 samples/s.
  std::vector<std::int64_t> rows = model.balance(1000);
  EXPECT_EQ(rows, train::split_rows(1000, std::vector<double>{500 / 0.6, 100}));
  EXPECT_EQ(rows, (std::vector<std::int64_t>{893, 107}));
  // Epoch 2 at those rows: the line through both points is the true cost.
  for (int k = 0; k < 2; ++k) model.add(k, rows[static_cast<std::size_t>(k)], modelled(k, rows[static_cast<std::size_t>(k)]));
  model.end_epoch();
  EXPECT_NEAR(model.fixed_seconds(0), 0.1, 1e-9);
  EXPECT_NEAR(model.seconds_per_row(0), 0.001, 1e-12);
  EXPECT_NEAR(model.fixed_seconds(1), 0, 1e-9);
  EXPECT_NEAR(model.seconds_per_row(1), 0.01, 1e-12);
  // Both finish at 1 s: 0.1 + 0.001 * 900 = 0.01 * 100.
  EXPECT_EQ(model.balance(1000), (std::vector<std::int64_t>{900, 100}));
  // Epoch 3 at those rows, both towers twice as slow (another load on the machine): too
  // little movement to refit, so each line scales through its new point and the split
  // stays where it was.
  for (int k = 0; k < 2; ++k) model.add(k, k == 0 ? 900 : 100, 2 * modelled(k, k == 0 ? 900 : 100));
  model.end_epoch();
  EXPECT_NEAR(model.fixed_seconds(0), 0.2, 1e-9);
  EXPECT_NEAR(model.seconds_per_row(1), 0.02, 1e-12);
  EXPECT_EQ(model.balance(1000), (std::vector<std::int64_t>{900, 100}));
  // A tower whose fixed cost alone outlasts the other's whole step keeps one row.
  train::StepTimeModel slow;
  slow.reset(2);
  for (const std::int64_t r : {10, 40}) {
    slow.add(0, r, 0.5 + 0.01 * static_cast<double>(r));
    slow.add(1, r, 0.001 * static_cast<double>(r));
    slow.end_epoch();
  }
  EXPECT_NEAR(slow.fixed_seconds(0), 0.5, 1e-9);
  EXPECT_EQ(slow.balance(100), (std::vector<std::int64_t>{1, 99}));
}

// Softmax regression: no batch statistics and no dropout, so that two towers on parts
// of a batch compute the mean gradient of the whole batch.
class LinearModel : public train::ModelDesc {
 public:
  std::vector<train::InputSpec> inputs() const override {
    return {{"x", graph::f32({graph::kUnknown, 6})}, {"label", graph::i32({graph::kUnknown})}};
  }
  graph::Tensor build_graph(const std::vector<graph::Tensor>& in) override {
    const graph::Tensor logits = graph::FullyConnected("fc", in[0], 3);
    return graph::identity(graph::reduce_mean(graph::sparse_softmax_cross_entropy(logits, in[1])), "cost");
  }
  graph::Optimizer optimizer(graph::Graph& g) override { return graph::momentum(g, 0.1f, 0.9f); }
};

// Batch pairs concatenated: what two towers read in one step, as one batch.
std::vector<dataflow::Datapoint> pairs_joined(const std::vector<dataflow::Datapoint>& batches) {
  std::vector<dataflow::Datapoint> out;
  for (std::size_t b = 0; b + 1 < batches.size(); b += 2) {
    std::vector<std::vector<Array>> two{batches[b], batches[b + 1]};
    std::vector<std::vector<Array>> one;
    const std::int64_t rows = batch_rows(batches[b]) + batch_rows(batches[b + 1]);
    train::resplit(two, std::vector<std::int64_t>{rows}, one);
    out.push_back(one[0]);
  }
  return out;
}

TEST(MultiDeviceBatchSplit, FixedSharesTrainLikeOneTowerOnTheWholeBatch) {
  // Both runs take 8 steps an epoch for 3 epochs: the towers 2 batches a step from a
  // flow of 8 (it repeats), the single tower 1 joined pair a step from a flow of 4.
  const auto config_for = [](std::vector<dataflow::Datapoint> batches) {
    train::TrainConfig config = tiny_config(1, 3);
    config.model = std::make_shared<LinearModel>();
    config.data = std::make_shared<train::FeedInput>(
        std::make_unique<dataflow::DataFromList>(std::move(batches), /*shuffle=*/false));
    config.steps_per_epoch = 8;
    return config;
  };
  const std::vector<dataflow::Datapoint> batches = tiny_batches(8, 16, 5);
  train::SyncMultiDeviceTrainerReplicated towers(instance(), {device_index(), device_index()}, 3, device_options());
  towers.set_batch_split(train::BatchSplit::fixed({1, 3}));
  train::launch_train_with_config(config_for(batches), towers);
  EXPECT_EQ(towers.last_rows(), (std::vector<std::int64_t>{8, 24}));
  EXPECT_EQ(towers.samples_per_step(), 32);

  train::SimpleTrainer one(device(), 3);
  train::launch_train_with_config(config_for(pairs_joined(batches)), one);
  ASSERT_EQ(towers.global_step(), 24);
  ASSERT_EQ(one.global_step(), 24);
  // The towers sum the two parts' gradients weighted 1/4 and 3/4 in float32: another
  // order of the same sums, a few ulps per step.
  const auto want = all_variables(one), got = all_variables(towers);
  for (const auto& [name, value] : want)
    for (std::size_t i = 0; i < value.data<float>().size(); ++i)
      ASSERT_NEAR(got.at(name).data<float>()[i], value.data<float>()[i], 1e-5f) << name;
}

TEST(MultiDeviceBatchSplit, AsyncTowersAndWrongShareCountsAreRefused) {
  train::AsyncMultiDeviceTrainer async(instance(), {device_index(), device_index()}, 3);
  EXPECT_THROW(async.set_batch_split(train::BatchSplit::by_throughput()), Error);
  train::SyncMultiDeviceTrainerReplicated sync(instance(), {device_index(), device_index()}, 3, device_options());
  try {
    sync.set_batch_split(train::BatchSplit::fixed({1, 2, 3}));
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("3 shares for 2 towers"), std::string::npos) << e.what();
  }
}

// The shares each epoch recorded in <dir>/stats.json, by epoch (from 1).
std::vector<std::vector<double>> recorded_shares(const std::string& dir, int towers) {
  std::ifstream in(dir + "/stats.json");
  const nlohmann::json stats = nlohmann::json::parse(in);
  std::vector<std::vector<double>> out;
  for (const nlohmann::json& entry : stats) {
    if (!entry.contains("towers/tower0/share")) continue;
    std::vector<double> shares;
    for (int k = 0; k < towers; ++k) shares.push_back(entry.at("towers/tower" + std::to_string(k) + "/share").get<double>());
    out.push_back(shares);
  }
  return out;
}

// Two towers sharing by throughput over 3 epochs of 6 steps: every epoch after the first
// cuts its batches by the shares the epoch before recorded; a run killed in epoch 3 and
// resumed from epoch 2's checkpoint cuts epoch 3 as the killed run did.
TEST(MultiDeviceBatchSplit, MeasuredSharesAreRecordedEachEpochAndRepeatedOnResume) {
  const auto config_for = [](const std::string& dir, std::vector<std::vector<std::int64_t>>& rows_by_step,
                             bool crash) {
    train::TrainConfig config = tiny_config(6, 3);
    config.logger_dir = dir;
    config.monitors = std::vector<callbacks::MonitorPtr>{std::make_shared<callbacks::JSONWriter>()};
    auto hooks = std::make_shared<Hooks>();
    hooks->trigger_step = [&rows_by_step](callbacks::TrainerView& t) {
      rows_by_step.resize(static_cast<std::size_t>(t.global_step()));
      rows_by_step.back() = dynamic_cast<train::MultiDeviceTrainer&>(t).last_rows();
    };
    config.callbacks = {std::make_shared<callbacks::ModelSaver>(3), hooks};
    if (crash) config.callbacks.push_back(std::make_shared<CrashAt>(14));
    return config;
  };
  const auto trainer = [] {
    auto t = std::make_unique<train::SyncMultiDeviceTrainerReplicated>(
        instance(), std::vector<int>{device_index(), device_index()}, 3, device_options());
    t->set_batch_split(train::BatchSplit::by_throughput());
    return t;
  };
  const std::string dir = temp_dir("batch-split-resume");
  std::vector<std::vector<std::int64_t>> killed_rows, resumed_rows;
  {
    auto killed = trainer();
    EXPECT_THROW(train::launch_train_with_config(config_for(dir, killed_rows, true), *killed), Error);
  }
  const std::vector<std::vector<double>> shares = recorded_shares(dir, 2);
  ASSERT_EQ(shares.size(), 2u) << "epochs 1 and 2 record their shares";
  for (const auto& s : shares) EXPECT_NEAR(s[0] + s[1], 1.0, 1e-12);
  ASSERT_EQ(killed_rows.size(), 14u);
  for (std::size_t step = 0; step < 14; ++step) {
    const std::vector<std::int64_t> want =
        step < 6 ? std::vector<std::int64_t>{16, 16} : train::split_rows(32, shares[step < 12 ? 0 : 1]);
    EXPECT_EQ(killed_rows[step], want) << "global step " << step + 1;
  }
  train::TrainConfig resumed_config = train::AutoResumeTrainConfig(config_for(dir, resumed_rows, false));
  ASSERT_EQ(resumed_config.starting_global_step, 12);
  auto resumed = trainer();
  train::launch_train_with_config(std::move(resumed_config), *resumed);
  ASSERT_EQ(resumed_rows.size(), 18u);
  for (std::size_t step = 12; step < 18; ++step)
    EXPECT_EQ(resumed_rows[step], train::split_rows(32, shares[1])) << "global step " << step + 1;
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace vkp::test
