// DistributedTrainer under `mpirun -np 2` (tests/towers/mpi/CMakeLists.txt): two
// processes of one tower each end where one process of two towers ends when rank r is fed
// the batches tower r is fed; unequal batches are weighted by size; only rank 0 writes
// logs, statistics and checkpoints; rank 0's hyperparameters reach every rank; ranks that
// disagree are refused on both; a StopTraining on one rank stops both after one step;
// gradient processors apply to the gradients reduced over the ranks; BatchNorm with
// sync_statistics normalises over every rank's batch.
//
// With --fault=exit|hang|pause the program is the fault drill instead (fault_test.cmake):
// rank 1 leaves (std::_Exit), hangs or pauses for 3 s at global step 5, and rank 0 must
// fail with a clear error rather than wait forever (or, for the pause under
// VKPACK_MPI_TIMEOUT=0, wait and train to the end).
#include "train/distributed_trainer.h"

#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <optional>
#include <string>
#include <thread>

#include "callbacks/checkpoint.h"
#include "callbacks/param_setters.h"
#include "callbacks/saver.h"
#include "core/error.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/grad_proc.h"
#include "engine/graph/loss_scale.h"
#include "towers/mpi_reduce.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

towers::MpiSession* the_mpi = nullptr;  // main's
towers::MpiSession& mpi() { return *the_mpi; }

constexpr std::uint64_t kSeed = 3;

// A run of the tiny model on `batches` (in order, every epoch the same), `steps` steps an
// epoch, the learning rate 0.1 then 0.03 from epoch 3: every rank's setter must act.
train::TrainConfig config_on(std::vector<dataflow::Datapoint> batches, std::int64_t steps, int epochs,
                             std::shared_ptr<train::ModelDesc> model = nullptr) {
  train::TrainConfig config = tiny_config(1, epochs);
  if (model) config.model = std::move(model);
  config.data = std::make_shared<train::FeedInput>(
      std::make_unique<dataflow::DataFromList>(std::move(batches), /*shuffle=*/false));
  config.steps_per_epoch = steps;
  config.callbacks = {std::make_shared<callbacks::ScheduledHyperParamSetter>(
      "learning_rate", std::vector<std::pair<std::int64_t, float>>{{1, 0.1f}, {3, 0.03f}})};
  return config;
}

// Batch i of `all` goes to tower i % towers: what one process of that many towers reads.
std::vector<dataflow::Datapoint> share(const std::vector<dataflow::Datapoint>& all, int towers, int which) {
  std::vector<dataflow::Datapoint> out;
  for (std::size_t i = static_cast<std::size_t>(which); i < all.size(); i += static_cast<std::size_t>(towers))
    out.push_back(all[i]);
  return out;
}

// Largest |a - b| / max(1, |b|) over the elements.
double relative_difference(const Array& a, const Array& b) {
  if (a.dtype() != DType::f32 || a.shape().dims() != b.shape().dims()) return INFINITY;
  double worst = 0;
  for (std::size_t i = 0; i < a.data<float>().size(); ++i) {
    const double x = a.data<float>()[i], y = b.data<float>()[i];
    worst = std::max(worst, std::abs(x - y) / std::max(1.0, std::abs(y)));
  }
  return worst;
}

bool same_bits(const Array& a, const Array& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

// Every rank's trainable variables equal rank 0's bit for bit.
void expect_same_as_chief(train::DistributedTrainer& trainer) {
  std::vector<Array> chief;
  const std::vector<std::string>& trainable = trainer.towers().trainable_names();
  for (const std::string& name : trainable) chief.push_back(trainer.session().variable(name));
  towers::broadcast_arrays(mpi(), chief, 0);
  for (std::size_t i = 0; i < trainable.size(); ++i)
    EXPECT_TRUE(same_bits(chief[i], trainer.session().variable(trainable[i])))
        << "rank " << mpi().rank() << ": " << trainable[i] << " differs from rank 0's";
}

// Trains 2 ranks of one tower on `rank_batches[rank]` and one process of two towers on
// the batches interleaved (tower r gets rank r's), then compares every variable of rank r
// (slots and BatchNorm averages too) with tower r's: equal bits when `bitwise`, within
// `tolerance` otherwise. Rank 0's trainable variables must equal every rank's bit for bit.
// `local`: how each rank's towers share the update (the parameter server keeps its master
// on the host, whose update equals the device's bit for bit on a CPU device only).
void expect_matches_one_process(const std::vector<std::vector<dataflow::Datapoint>>& rank_batches, bool bitwise,
                                double tolerance, std::int64_t samples,
                                towers::Reduction local = towers::Reduction::replicated,
                                const std::function<std::shared_ptr<train::ModelDesc>()>& model = {},
                                const std::optional<graph::LossScaleOptions>& mixed_precision = {}) {
  const int rank = mpi().rank();
  const auto steps = static_cast<std::int64_t>(rank_batches[0].size());
  std::vector<dataflow::Datapoint> interleaved;
  for (std::size_t i = 0; i < rank_batches[0].size(); ++i)
    for (const auto& mine : rank_batches) interleaved.push_back(mine[i]);

  const auto configured = [&](std::vector<dataflow::Datapoint> batches) {
    train::TrainConfig config = config_on(std::move(batches), steps, 3, model ? model() : nullptr);
    config.mixed_precision = mixed_precision.has_value();
    if (mixed_precision) config.loss_scale = *mixed_precision;
    return config;
  };
  train::SyncMultiDeviceTrainerReplicated reference(instance(), {device_index(), device_index()}, kSeed,
                                                    device_options());
  train::launch_train_with_config(configured(interleaved), reference);

  train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options(), local);
  train::launch_train_with_config(configured(rank_batches[static_cast<std::size_t>(rank)]), trainer);
  EXPECT_EQ(trainer.towers().host_master() != nullptr, local == towers::Reduction::parameter_server);
  if (trainer.towers().host_master() && trainer.device().kind() != vk::DeviceKind::cpu) {
    bitwise = false;
    tolerance = 1e-5;
  }

  EXPECT_EQ(trainer.global_step(), 3 * steps);
  EXPECT_EQ(trainer.samples_per_step(), samples);
  EXPECT_NEAR(trainer.last_cost(), reference.last_cost(), 1e-6);
  graph::Session& mine = trainer.session();
  graph::Session& theirs = reference.towers().session(rank);
  const std::vector<std::string> names = theirs.variables().names();
  EXPECT_EQ(mine.variables().names(), names);
  double worst = 0;
  for (const std::string& name : names) {
    const Array a = mine.variable(name), b = theirs.variable(name);
    const double d = relative_difference(a, b);
    worst = std::max(worst, d);
    if (bitwise)
      EXPECT_TRUE(same_bits(a, b)) << "rank " << rank << ": " << name << " differs from tower " << rank
                                   << " of one process by " << d;
    else
      EXPECT_LE(d, tolerance) << "rank " << rank << ": " << name;
  }
  std::printf("[rank %d] largest relative difference from one process of two towers: %.3g\n", rank, worst);
  if (mixed_precision) {  // the overflow path ran, on every rank alike
    const float skipped = mine.variable(graph::kSkippedStepsVariable).data<float>()[0];
    EXPECT_GT(skipped, 0.0f) << "rank " << rank << ": no step overflowed";
    EXPECT_LT(skipped, static_cast<float>(3 * steps)) << "rank " << rank << ": every step overflowed";
  }
  expect_same_as_chief(trainer);
}

TEST(DistributedTrainer, TwoRanksMatchOneProcessOfTwoTowers) {
  ASSERT_EQ(mpi().size(), 2) << "run under mpirun -np 2";
  // Equal batches of 16: the weights are powers of two, so every step is exact.
  const std::vector<dataflow::Datapoint> all = tiny_batches(8, 16, 11);
  expect_matches_one_process({share(all, 2, 0), share(all, 2, 1)}, /*bitwise=*/true, 0, 32);
}

TEST(DistributedTrainer, RanksOfParameterServerTowersMatchOneProcess) {
  // Each rank's master on the host, updated from the gradients averaged over the ranks:
  // every rank's master takes the same update, and the slots reach tower 0 by the end.
  const std::vector<dataflow::Datapoint> all = tiny_batches(8, 16, 13);
  expect_matches_one_process({share(all, 2, 0), share(all, 2, 1)}, /*bitwise=*/true, 0, 32,
                             towers::Reduction::parameter_server);
}

// The tiny model with its gradients clipped to a global norm they exceed.
class ClippedTinyModel : public TinyModel {
 public:
  graph::Optimizer optimizer(graph::Graph& g) override {
    return graph::apply_grad_processors(TinyModel::optimizer(g), {std::make_shared<graph::GlobalNormClip>(0.05f)});
  }
};

TEST(DistributedTrainer, RanksApplyGradientProcessorsAfterReducingAcrossThem) {
  // The clip sees the gradients averaged over both ranks, as one process's towers' clip
  // sees their average (tests/train/grad_proc_test.cpp shows that equals one tower).
  const std::vector<dataflow::Datapoint> all = tiny_batches(8, 16, 14);
  expect_matches_one_process({share(all, 2, 0), share(all, 2, 1)}, /*bitwise=*/true, 0, 32,
                             towers::Reduction::replicated, [] { return std::make_shared<ClippedTinyModel>(); });
}

TEST(DistributedTrainer, RanksInMixedPrecisionSkipAndScaleAsOneProcess) {
  // 128 hidden units: activations of 16 x 128 are stored as float16. From a scale of 2^24
  // the first steps overflow and halve it; every rank must skip those steps and reach the
  // scale and weights of one process of two towers, whose skips are decided on the same
  // averages.
  const std::vector<dataflow::Datapoint> all = tiny_batches(8, 16, 15);
  expect_matches_one_process(
      {share(all, 2, 0), share(all, 2, 1)}, /*bitwise=*/true, 0, 32, towers::Reduction::replicated,
      [] { return std::make_shared<TinyModel>(128); },
      graph::LossScaleOptions{.initial_scale = 16777216.0f, .growth_interval = 3});
}

TEST(DistributedTrainer, RanksSynchronizeBatchNormStatisticsAsOneProcessOfTwoTowers) {
  // BatchNorm over the global batch: each rank's moments and backward sums are averaged
  // over its towers, then over the ranks (SyncTowers::set_cross_exchange), as one
  // process averages its two towers'; every variable, the moving averages included,
  // ends as there.
  const std::vector<dataflow::Datapoint> all = tiny_batches(8, 16, 16);
  expect_matches_one_process({share(all, 2, 0), share(all, 2, 1)}, /*bitwise=*/true, 0, 32,
                             towers::Reduction::replicated,
                             [] { return std::make_shared<TinyModel>(8, 0.1f, /*sync_statistics=*/true); });
}

TEST(DistributedTrainer, WeighsUnequalBatchesBySize) {
  ASSERT_EQ(mpi().size(), 2) << "run under mpirun -np 2";
  // Rank 0 takes 16 datapoints a step, rank 1 takes 5: weights 16/21 and 5/21, as two
  // unequal towers. An unweighted mean differs from that by ~1e-2 here.
  expect_matches_one_process({tiny_batches(4, 16, 12), tiny_batches(4, 5, 13)}, /*bitwise=*/false, 1e-5, 21);
}

TEST(DistributedTrainer, OnlyTheChiefWritesFiles) {
  // Each rank is given a log directory of its own (temp_dir names it by process) with
  // the default callbacks and monitors, and a ModelSaver.
  const std::string dir = temp_dir("distributed-logs");
  train::TrainConfig config = config_on(tiny_batches(3, 16, 14 + static_cast<std::uint64_t>(mpi().rank())), 3, 2);
  config.extra_callbacks.reset();
  config.monitors.reset();
  config.callbacks.push_back(std::make_shared<callbacks::ModelSaver>());
  config.logger_dir = dir;
  train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options());
  train::launch_train_with_config(std::move(config), trainer);

  if (mpi().rank() == 0) {
    EXPECT_TRUE(trainer.is_chief());
    EXPECT_EQ(trainer.logger_dir(), dir);
    const std::string latest = callbacks::latest_checkpoint(dir);
    ASSERT_FALSE(latest.empty()) << "no checkpoint in " << dir;
    EXPECT_EQ(callbacks::load_checkpoint(latest).info.global_step, 6);
    std::ifstream stats(std::filesystem::path(dir) / "stats.json");
    const std::string text((std::istreambuf_iterator<char>(stats)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find("\"epoch_num\":2"), std::string::npos) << text;
  } else {
    EXPECT_FALSE(trainer.is_chief());
    EXPECT_EQ(trainer.logger_dir(), "");
    for (const auto& entry : std::filesystem::directory_iterator(dir))
      ADD_FAILURE() << "rank " << mpi().rank() << " wrote " << entry.path();
  }
  std::filesystem::remove_all(dir);
}

TEST(DistributedTrainer, EveryRankTakesTheChiefsHyperparameters) {
  // Only rank 0 lowers the learning rate (to 0.03 from epoch 3); rank 1 receives it at
  // the epoch's start, or it would apply other updates than rank 0 from then on.
  train::TrainConfig config = config_on(tiny_batches(2, 16, 17 + static_cast<std::uint64_t>(mpi().rank())), 2, 3);
  if (mpi().rank() != 0) config.callbacks.clear();
  train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options());
  train::launch_train_with_config(std::move(config), trainer);
  EXPECT_EQ(trainer.session().hyperparameter("learning_rate"), 0.03f) << "rank " << mpi().rank();
  expect_same_as_chief(trainer);
}

TEST(DistributedTrainer, RefusesRanksThatDisagreeOnEveryRank) {
  // Rank 1 would train one epoch more and then wait for rank 0 forever.
  train::TrainConfig config = config_on(tiny_batches(2, 16, 15), 2, 2 + mpi().rank());
  train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options());
  try {
    train::launch_train_with_config(std::move(config), trainer);
    ADD_FAILURE() << "rank " << mpi().rank() << " trained";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("disagree on the max epoch (from 2 to 3"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(mpi().failed());
}

TEST(DistributedTrainer, AStopOnOneRankStopsEveryRankAfterTheSameStep) {
  // 3 epochs of 4 steps. Where one rank alone throws StopTraining, and the global step
  // at which both must then have stopped: the step in which it asked is completed.
  struct Case {
    int rank;
    const char* hook;
    std::int64_t at, stopped;
  };
  for (const Case c : {Case{1, "trigger_step", 3, 3}, Case{0, "before_run", 5, 6}, Case{1, "trigger_epoch", 8, 8}}) {
    const std::string what = std::string("rank ") + std::to_string(c.rank) + " stops in " + c.hook;
    train::TrainConfig config = config_on(tiny_batches(4, 16, 19 + static_cast<std::uint64_t>(mpi().rank())), 4, 3);
    auto stop = std::make_shared<Hooks>();
    const auto ask = [&, c](callbacks::TrainerView& t) {
      if (mpi().rank() == c.rank && t.global_step() == c.at) throw callbacks::StopTraining("enough");
    };
    if (std::string(c.hook) == "trigger_step") stop->trigger_step = ask;
    if (std::string(c.hook) == "before_run") stop->before_run = ask;
    if (std::string(c.hook) == "trigger_epoch") stop->trigger_epoch = ask;
    bool after_train = false;
    stop->after_train = [&](callbacks::TrainerView&) { after_train = true; };
    config.callbacks.push_back(stop);
    train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options());
    EXPECT_NO_THROW(train::launch_train_with_config(std::move(config), trainer)) << what;
    EXPECT_EQ(trainer.global_step(), c.stopped) << what << ", on rank " << mpi().rank();
    EXPECT_TRUE(after_train) << what;
    EXPECT_FALSE(mpi().failed()) << what;
    expect_same_as_chief(trainer);
  }
}

// VKPACK_MPI_TIMEOUT as a session reads it: unset or empty, the default; 0, no limit;
// seconds with a fraction; a negative or non-number value refused by name. (A second
// session in this process: MPI is initialised already, so it neither initialises nor
// finalizes.)
TEST(MpiSession, TakesItsTimeoutFromTheEnvironment) {
  const char* set = std::getenv("VKPACK_MPI_TIMEOUT");
  const std::string before = set ? set : "";
  ::unsetenv("VKPACK_MPI_TIMEOUT");
  EXPECT_EQ(towers::MpiSession().timeout(), towers::kDefaultMpiTimeoutSeconds);
  EXPECT_EQ(towers::kDefaultMpiTimeoutSeconds, 300);  // README.md's figure
  for (const auto& [text, seconds] : {std::pair<const char*, double>{"", 300}, {"0", 0}, {"7.5", 7.5}}) {
    ::setenv("VKPACK_MPI_TIMEOUT", text, 1);
    EXPECT_EQ(towers::MpiSession().timeout(), seconds) << "VKPACK_MPI_TIMEOUT='" << text << "'";
  }
  EXPECT_EQ(towers::MpiSession(2.0).timeout(), 2.0) << "a timeout given in code wins";
  for (const char* bad : {"-1", "soon", "5s"}) {
    ::setenv("VKPACK_MPI_TIMEOUT", bad, 1);
    try {
      towers::MpiSession session;
      ADD_FAILURE() << "VKPACK_MPI_TIMEOUT='" << bad << "' gave a timeout of " << session.timeout();
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find(std::string("VKPACK_MPI_TIMEOUT is '") + bad + "'"), std::string::npos) << e.what();
    }
  }
  if (set)
    ::setenv("VKPACK_MPI_TIMEOUT", before.c_str(), 1);
  else
    ::unsetenv("VKPACK_MPI_TIMEOUT");
}

// Rank 1 leaves, hangs or pauses for 3 s after global step 5; rank 0 reports how it
// failed and how long after its last step, then ends the job (or, where the pause was
// waited out, says that training ended).
int fault_drill(const std::string& mode) {
  using Clock = std::chrono::steady_clock;
  Clock::time_point last_step = Clock::now();
  auto fault = std::make_shared<Hooks>();
  fault->trigger_step = [&](callbacks::TrainerView& t) {
    last_step = Clock::now();
    if (mpi().rank() != 1 || t.global_step() != 5) return;
    std::fprintf(stderr, "[rank 1] %s at global step 5\n",
                 mode == "exit"    ? "exits"
                 : mode == "pause" ? "pauses"
                                   : "hangs");
    if (mode == "exit") std::_Exit(0);
    if (mode == "pause") {
      std::this_thread::sleep_for(std::chrono::seconds(3));
      return;
    }
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  };
  train::TrainConfig config = config_on(tiny_batches(4, 16, 16), 4, 5);
  config.callbacks.push_back(fault);
  train::DistributedTrainer trainer(mpi(), instance(), {device_index()}, kSeed, device_options());
  try {
    train::launch_train_with_config(std::move(config), trainer);
  } catch (const Error& e) {
    const double waited = std::chrono::duration<double>(Clock::now() - last_step).count();
    std::fprintf(stderr, "[rank %d] training failed %.1f s after its last step: %s\n", mpi().rank(), waited, e.what());
    std::fflush(stderr);
    mpi().abort(3);
  }
  std::fprintf(stderr, "[rank %d] training ended without an error\n", mpi().rank());
  return 0;
}

// On ranks other than 0 the tests print only their failures, named by rank.
class RankFailurePrinter : public ::testing::EmptyTestEventListener {
 public:
  void OnTestPartResult(const ::testing::TestPartResult& r) override {
    if (r.failed())
      std::fprintf(stderr, "[rank %d] %s:%d: failure\n%s\n", mpi().rank(), r.file_name() ? r.file_name() : "?",
                   r.line_number(), r.message());
  }
};

}  // namespace
}  // namespace vkp::test

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  vkp::towers::MpiSession mpi;
  vkp::test::the_mpi = &mpi;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--fault=", 8) == 0) return vkp::test::fault_drill(argv[i] + 8);
  if (mpi.rank() != 0) {
    ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
    delete listeners.Release(listeners.default_result_printer());
    listeners.Append(new vkp::test::RankFailurePrinter);
  }
  return RUN_ALL_TESTS();
}
