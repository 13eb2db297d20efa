// Towers on several VkDevices of the test device: K towers on K batches reach the
// variables one tower reaches on the concatenated batch; with BatchNorm (statistics
// per tower, as in tensorpack) they match one graph holding K towers on the slices;
// unequal batches are weighted; parameter server matches replicated, its master on the
// host or on tower 0, for every optimizer; an async step applies every tower's gradient
// (async_test.cpp has the free-running towers);
// towers that differ are refused; gradients reduced in buckets while backward runs give
// bitwise the synchronous path's variables.
#include <gtest/gtest.h>

#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <map>

#include "core/error.h"
#include "core/rng.h"
#include "engine/graph/autodiff.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "engine/graph/variables.h"
#include "tower_fixtures.h"
#include "towers/async_towers.h"
#include "towers/host_master.h"
#include "towers/sync_towers.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using namespace graph;

class TowersTest : public ::testing::Test {
 protected:
  static void TearDownTestSuite() { close_tower_devices(); }
};

// x f32 [?, 5] -> FC 7 (relu) [-> BatchNorm] -> FC 3; mean cross entropy.
Tensor model(const Tensor& x, const Tensor& label, bool batch_norm) {
  Tensor h = FullyConnected("fc0", x, 7);
  if (batch_norm) h = BatchNorm("bn", h);
  h = relu(h);
  const Tensor logits = FullyConnected("fc1", h, 3);
  return reduce_mean(sparse_softmax_cross_entropy(logits, label));
}

towers::Tower build(Graph& g, bool batch_norm) {
  const Tensor x = placeholder(g, "x", f32({kUnknown, 5}));
  const Tensor label = placeholder(g, "label", i32({kUnknown}));
  return {{x, label}, model(x, label, batch_norm)};
}

Optimizer make_optimizer(Graph& g) { return momentum(g, 0.2f, 0.9f); }

// A batch cut into consecutive slices of `sizes` rows, one per tower.
std::vector<std::vector<Array>> split(const std::vector<Array>& batch, const std::vector<std::int64_t>& sizes) {
  std::vector<std::vector<Array>> batches;
  std::int64_t at = 0;
  for (std::int64_t n : sizes) {
    batches.push_back(rows(batch, at, at + n));
    at += n;
  }
  return batches;
}

std::vector<std::string> names_of(const Graph& g) {
  std::vector<std::string> names;
  for (const Tensor& v : g.variables()) names.push_back(std::get<VariableAttrs>(v.node().attrs).var_name);
  return names;
}

bool same_bits(const Array& a, const Array& b) {
  return a.nbytes() == b.nbytes() && std::memcmp(a.bytes().data(), b.bytes().data(), a.nbytes()) == 0;
}

void expect_close(Session& a, Session& b, const std::vector<std::string>& names, float tolerance) {
  for (const std::string& name : names) {
    const Array x = a.variable(name), y = b.variable(name);
    ASSERT_EQ(x.shape().dims(), y.shape().dims()) << name;
    float worst = 0;
    for (std::size_t i = 0; i < x.data<float>().size(); ++i)
      worst = std::max(worst, std::abs(x.data<float>()[i] - y.data<float>()[i]));
    EXPECT_LE(worst, tolerance) << name;
  }
}

// The reference: one graph on one device holding `splits.size()` towers on slices of
// the batch (one slice: the plain single-tower step), cost = batch-weighted mean.
struct Reference {
  Graph g{3};
  std::unique_ptr<Session> session;
  std::vector<Tensor> inputs, train;

  Reference(const std::vector<std::int64_t>& sizes, bool batch_norm) {
    std::int64_t total = 0;
    for (std::int64_t s : sizes) total += s;
    Tensor cost;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      TowerContext tower(g, "tower" + std::to_string(k), static_cast<int>(k), true);
      VariableScope reuse(g, "", k == 0 ? Reuse::inherit : Reuse::yes);
      const Tensor x = placeholder(g, "x", f32({sizes[k], 5}));
      const Tensor label = placeholder(g, "label", i32({sizes[k]}));
      inputs.push_back(x);
      inputs.push_back(label);
      const Tensor c = model(x, label, batch_norm) * static_cast<float>(static_cast<double>(sizes[k]) / total);
      cost = k == 0 ? c : cost + c;
    }
    train = make_optimizer(g).minimize(cost);
    session = std::make_unique<Session>(g, device());
  }
  void step(const std::vector<Array>& batch, const std::vector<std::int64_t>& sizes, std::uint64_t global_step) {
    Feeds feeds;
    std::int64_t at = 0;
    for (std::size_t k = 0; k < sizes.size(); ++k) {
      const std::vector<Array> part = rows(batch, at, at + sizes[k]);
      feeds.emplace_back(inputs[2 * k], part[0]);
      feeds.emplace_back(inputs[2 * k + 1], part[1]);
      at += sizes[k];
    }
    session->set_global_step(global_step);
    session->run(feeds, {}, train);
  }
};

// K towers with per-tower batch sizes `sizes` against the reference.
// `on`: the towers' devices (default: the test device opened once per tower).
// `between_towers`: how far tower k's trainable variables may be from tower 0's (0: the
// same bits, as within one driver).
void compare(towers::Reduction reduction, const std::vector<std::int64_t>& sizes, bool batch_norm,
             bool reference_splits, towers::Master master = towers::Master::host,
             std::vector<vk::Device*> on = {}, float between_towers = 0.0f) {
  std::int64_t total = 0;
  for (std::int64_t s : sizes) total += s;
  const auto steps = three_class_batches(20, total, 17);
  if (on.empty()) on = tower_devices(static_cast<int>(sizes.size()));
  const std::unique_ptr<towers::Towers> made =
      towers::make_towers(on, [&](Graph& g, int) { return build(g, batch_norm); }, make_optimizer,
                          {.reduction = reduction, .seed = 3, .master = master});
  towers::Towers& t = *made;
  Reference ref(reference_splits ? sizes : std::vector<std::int64_t>{total}, batch_norm);
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const std::vector<std::vector<Array>> batches = split(steps[s], sizes);
    const double cost = t.step(batches, s);
    EXPECT_TRUE(std::isfinite(cost));
    ref.step(steps[s], reference_splits ? sizes : std::vector<std::int64_t>{total}, s);
  }
  if (t.host_master()) t.host_master()->store_slots();
  std::vector<std::string> compared;
  for (const std::string& name : names_of(t.graph(0)))
    if (name.find("EMA") == std::string::npos) compared.push_back(name);  // per-tower statistics
  EXPECT_GE(compared.size(), 8u);  // weights, biases and their momentum slots
  // 20 steps of float32 reduced in another order: differences stay near rounding.
  expect_close(t.session(0), *ref.session, compared, 2e-5f);
  for (int k = 1; k < t.size(); ++k) expect_close(t.session(k), t.session(0), t.trainable_names(), between_towers);
}

TEST_F(TowersTest, TwoReplicatedTowersEqualOneTowerOnTheConcatenatedBatch) {
  compare(towers::Reduction::replicated, {8, 8}, /*batch_norm=*/false, /*reference_splits=*/false);
}

TEST_F(TowersTest, ThreeReplicatedTowersEqualOneTowerOnTheConcatenatedBatch) {
  compare(towers::Reduction::replicated, {5, 5, 5}, /*batch_norm=*/false, /*reference_splits=*/false);
}

// Three towers that look like three vendors' GPUs: staged memory under the NVIDIA
// limits, mapped memory (where the device has it) under ARM Mali's, staged under
// MoltenVK's. Each device's transfers, readback and limits differ; the training must not.
std::vector<std::unique_ptr<vk::Device>> mixed_devices() {
  auto open = [](vk::MemoryMode memory, const char* profile) {
    vk::DeviceOptions o = device_options();
    o.memory = memory;
    o.limits_profile = profile;
    try {
      return std::make_unique<vk::Device>(instance(), device_index(), o);
    } catch (const Error&) {  // a discrete GPU cannot map its memory: staged then
      o.memory = vk::MemoryMode::staged;
      return std::make_unique<vk::Device>(instance(), device_index(), o);
    }
  };
  std::vector<std::unique_ptr<vk::Device>> out;
  out.push_back(open(vk::MemoryMode::staged, "nvidia"));
  out.push_back(open(vk::MemoryMode::mapped, "arm-mali"));
  out.push_back(open(vk::MemoryMode::staged, "apple-moltenvk"));
  return out;
}

TEST_F(TowersTest, TowersOnDevicesOfDifferentVendorsEqualOneTower) {
  for (towers::Reduction reduction : {towers::Reduction::replicated, towers::Reduction::parameter_server}) {
    SCOPED_TRACE(towers::to_string(reduction));
    const std::vector<std::unique_ptr<vk::Device>> mixed = mixed_devices();
    EXPECT_FALSE(mixed[0]->memory().mapped());
    EXPECT_EQ(mixed[1]->limits_profile(), "arm-mali");
    EXPECT_FALSE(mixed[1]->features().coherent_readback);
    compare(reduction, {4, 6, 5}, /*batch_norm=*/false, /*reference_splits=*/false, towers::Master::host,
            {mixed[0].get(), mixed[1].get(), mixed[2].get()});
  }
}

// A device of another vendor than the test's, in this process: where the instance lists
// two drivers (scripts/test's SwiftShader leg lists lavapipe beside SwiftShader).
constexpr const char* kTwoDriversNeeded =
    "needs devices of two vendors in this process: VK_ICD_FILENAMES listing two drivers "
    "(scripts/test's SwiftShader leg lists lavapipe beside it)";

std::unique_ptr<vk::Device> other_vendor_device() {
  const std::uint32_t own = instance().device(device_index()).vendor_id;
  for (const vk::PhysicalDeviceInfo& d : instance().devices())
    if (d.vendor_id != own) return std::make_unique<vk::Device>(instance(), d.index, device_options());
  return nullptr;
}

// Towers on two drivers of different vendors (lavapipe and SwiftShader: other compilers,
// subgroup sizes, workgroup and push-constant limits, 16-bit storage or not) train as one
// tower on the joined batch. Within one driver that holds bit for bit; across two, each
// driver rounds its exp, log and division differently (a few ulp) and may fuse a
// multiply-add or not, so the gradients differ from the one-tower reference by rounding,
// as they do when the reduction order changes: the same 2e-5 after 20 steps. Replicated
// towers each apply the averaged gradient on their own device, so their copies may drift
// apart by as much (momentum's multiply-add, fused on one driver and not on the other);
// parameter-server towers receive the master's bits and stay equal.
TEST_F(TowersTest, TowersOnTwoDriversOfDifferentVendorsEqualOneTower) {
  const std::unique_ptr<vk::Device> other = other_vendor_device();
  if (!other)
    GTEST_SKIP() << kTwoDriversNeeded;
  vk::Device& own = *tower_devices(1)[0];
  SCOPED_TRACE(own.label() + " and " + other->label());
  compare(towers::Reduction::replicated, {4, 6}, /*batch_norm=*/false, /*reference_splits=*/false, towers::Master::host,
          {&own, other.get()}, 2e-5f);
  compare(towers::Reduction::parameter_server, {6, 4}, /*batch_norm=*/true, /*reference_splits=*/true,
          towers::Master::host, {&own, other.get()});
  compare(towers::Reduction::parameter_server, {5, 5}, /*batch_norm=*/false, /*reference_splits=*/false,
          towers::Master::device, {other.get(), &own});
}

TEST_F(TowersTest, UnequalBatchesAreWeightedBySize) {
  compare(towers::Reduction::replicated, {3, 9}, /*batch_norm=*/false, /*reference_splits=*/false);
}

TEST_F(TowersTest, BatchNormTowersEqualOneGraphOfTowersOnTheSlices) {
  compare(towers::Reduction::replicated, {6, 10}, /*batch_norm=*/true, /*reference_splits=*/true);
}

TEST_F(TowersTest, ParameterServerEqualsReplicated) {
  for (const towers::Master master : {towers::Master::host, towers::Master::device}) {
    compare(towers::Reduction::parameter_server, {4, 12}, /*batch_norm=*/false, /*reference_splits=*/false, master);
    compare(towers::Reduction::parameter_server, {6, 6, 6}, /*batch_norm=*/true, /*reference_splits=*/true, master);
  }
}

void expect_async_step_applies_both_gradients(std::vector<vk::Device*> devices) {
  // An async step gives tower k batch k. Both towers start from w, so with SGD the master
  // ends at w - lr * scale * (g0 + g1) in either order of applying, and after the step
  // every tower holds it; the reference computes the gradients on one device.
  const float lr = 0.3f, scale = 0.5f;
  auto sgd_optimizer = [lr](Graph& g) { return sgd(g, lr); };
  towers::AsyncTowers t(std::move(devices), [](Graph& g, int) { return build(g, false); }, sgd_optimizer,
                        {.reduction = towers::Reduction::async, .seed = 9, .async_scale = scale});
  const auto batches = three_class_batches(2, 6, 5);
  Graph g(9);
  const towers::Tower ref = build(g, false);
  const std::vector<Tensor> vars = g.trainable_variables();
  const std::vector<Tensor> grads = gradients(ref.cost, vars);
  Session s(g, device());
  std::vector<std::vector<Array>> before, g0, g1;
  for (const Tensor& v : vars) before.push_back({s.variable(std::get<VariableAttrs>(v.node().attrs).var_name)});
  const std::vector<Array> r0 = s.run({{ref.inputs[0], batches[0][0]}, {ref.inputs[1], batches[0][1]}}, grads);
  const std::vector<Array> r1 = s.run({{ref.inputs[0], batches[1][0]}, {ref.inputs[1], batches[1][1]}}, grads);
  t.step(batches, 0);
  for (std::size_t i = 0; i < vars.size(); ++i) {
    const std::string& name = std::get<VariableAttrs>(vars[i].node().attrs).var_name;
    for (int k = 0; k < 2; ++k) {
      const Array got = t.session(k).variable(name);
      for (std::size_t j = 0; j < got.data<float>().size(); ++j) {
        const float expected = before[i][0].data<float>()[j] - lr * scale * (r0[i].data<float>()[j] + r1[i].data<float>()[j]);
        EXPECT_NEAR(got.data<float>()[j], expected, 1e-5f) << name << "[" << j << "] on tower " << k;
      }
    }
  }
}

TEST_F(TowersTest, AsyncStepAppliesEveryTowersGradientTakenFromTheSameParameters) {
  expect_async_step_applies_both_gradients(tower_devices(2));
}

// The same across two vendors' drivers (see TowersOnTwoDriversOfDifferentVendorsEqualOneTower):
// each gradient within rounding of the reference's, so the same 1e-5.
TEST_F(TowersTest, AsyncTowersOnTwoDriversOfDifferentVendorsApplyBothGradients) {
  const std::unique_ptr<vk::Device> other = other_vendor_device();
  if (!other)
    GTEST_SKIP() << kTwoDriversNeeded;
  expect_async_step_applies_both_gradients({tower_devices(1)[0], other.get()});
}

TEST_F(TowersTest, RefusesTowersWithOtherVariables) {
  try {
    towers::ReplicatedTowers t(
        tower_devices(2),
        [](Graph& g, int k) {
          towers::Tower tw = build(g, false);
          if (k == 1) tw.cost = tw.cost + reduce_sum(get_variable(g, "extra", {2}, ones()));
          return tw;
        },
        make_optimizer);
    FAIL() << "towers with different variables were accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("extra"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("tower 1"), std::string::npos) << e.what();
  }
}

TEST_F(TowersTest, StepChecksTheBatchCount) {
  towers::ReplicatedTowers t(
      tower_devices(2), [](Graph& g, int) { return build(g, false); }, make_optimizer);
  const auto one = three_class_batches(1, 4, 1);
  EXPECT_THROW(t.step(one, 0), Error);
}

// time_towers: each tower's seconds from writing its batch to its gradients, within the
// step's own wall time, and the timing changes nothing in what the step computes.
TEST_F(TowersTest, TimedTowersTakeEachTowersSecondsWithinTheStep) {
  const auto run = [](bool timed, std::vector<double>& seconds, double& wall) {
    towers::ReplicatedTowers t(tower_devices(3), [](Graph& g, int) { return build(g, false); }, make_optimizer,
                               {.seed = 1, .time_towers = timed});
    std::vector<std::vector<Array>> batches = three_class_batches(3, 4, 2);
    batches[2] = three_class_batches(1, 64, 3)[0];
    for (int s = 0; s < 3; ++s) {
      const auto start = std::chrono::steady_clock::now();
      t.step(batches, static_cast<std::uint64_t>(s));
      wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    seconds = t.tower_seconds();
    return t.session(0).variable("fc1/W");
  };
  std::vector<double> seconds, none;
  double wall = 0, unused = 0;
  const Array timed = run(true, seconds, wall), untimed = run(false, none, unused);
  EXPECT_TRUE(none.empty());
  ASSERT_EQ(seconds.size(), 3u);
  for (double s : seconds) {
    EXPECT_GT(s, 0);
    EXPECT_LE(s, wall);
  }
  ASSERT_EQ(timed.nbytes(), untimed.nbytes());
  EXPECT_EQ(std::memcmp(timed.bytes().data(), untimed.bytes().data(), timed.nbytes()), 0);
}

// What `steps` steps of `count` towers (tower k takes 5 + k rows) leave behind.
struct Trained {
  std::map<std::string, Array> variables;  // tower 0's, slots and moving averages too
  std::vector<double> costs;
  std::vector<std::vector<Array>> crossed;  // what the cross-process hook was given, by call
  towers::StepTimes times;                  // of the last step
};

// With cross_scale > 0, a cross-process hook stands in for other processes whose
// gradients are cross_scale times ours. The learning rate drops to 0.15 at step 5 (a
// host master must read it every step).
Trained train_towers(int count, bool batch_norm, towers::TowerOptions options, float cross_scale = 0,
                     const towers::Towers::OptimizerFn& optimizer = make_optimizer) {
  constexpr int kSteps = 10;
  std::vector<std::int64_t> sizes;
  std::int64_t total = 0;
  for (int k = 0; k < count; ++k) total += sizes.emplace_back(5 + k);
  const auto steps = three_class_batches(kSteps, total, 23);
  const std::unique_ptr<towers::Towers> made = towers::make_towers(
      tower_devices(count), [&](Graph& g, int) { return build(g, batch_norm); }, optimizer, options);
  // Replicated or parameter server: both synchronous.
  towers::SyncTowers& t = dynamic_cast<towers::SyncTowers&>(*made);
  Trained out;
  if (cross_scale > 0)
    t.set_cross_reduce([&out, cross_scale](std::span<Array> gradients, double& samples, double& cost) {
      out.crossed.emplace_back(gradients.begin(), gradients.end());
      if (cross_scale == 1.0f) return;
      for (Array& g : gradients)
        for (float& x : g.data<float>()) x *= cross_scale;
      samples *= 2;
      cost *= cross_scale;
    });
  for (std::size_t s = 0; s < steps.size(); ++s) {
    const std::vector<std::vector<Array>> batches = split(steps[s], sizes);
    if (s == 5) t.session(0).set_hyperparameter("learning_rate", 0.15f);
    out.costs.push_back(t.step(batches, s));
  }
  out.times = t.last_times();
  if (t.host_master()) t.host_master()->store_slots();
  for (const std::string& name : names_of(t.graph(0))) out.variables[name] = t.session(0).variable(name);
  if (t.host_master()) {  // tower 0 has the master's slots, every tower its parameters
    for (const std::string& name : names_of(t.graph(0))) {
      if (name.find("EMA") != std::string::npos) continue;  // per-tower statistics
      EXPECT_TRUE(same_bits(t.session(0).variable(name), t.host_master()->value(name))) << name;
    }
    for (int k = 1; k < count; ++k)
      for (const std::string& name : t.trainable_names())
        EXPECT_TRUE(same_bits(t.session(k).variable(name), t.host_master()->value(name))) << name << " on tower " << k;
  }
  for (int k = 1; k < count && options.reduction == towers::Reduction::replicated; ++k)
    expect_close(t.session(k), t.session(0), t.trainable_names(), 0.0f);
  return out;
}

void expect_bitwise(const Trained& got, const Trained& want, const std::string& what) {
  EXPECT_EQ(got.costs, want.costs) << what;
  ASSERT_EQ(got.variables.size(), want.variables.size()) << what;
  for (const auto& [name, value] : want.variables) {
    const Array& other = got.variables.at(name);
    ASSERT_EQ(other.nbytes(), value.nbytes()) << what << " " << name;
    EXPECT_EQ(std::memcmp(other.bytes().data(), value.bytes().data(), value.nbytes()), 0) << what << " " << name;
  }
  ASSERT_EQ(got.crossed.size(), want.crossed.size()) << what;
  for (std::size_t c = 0; c < want.crossed.size(); ++c)
    for (std::size_t i = 0; i < want.crossed[c].size(); ++i)
      EXPECT_EQ(
          std::memcmp(got.crossed[c][i].bytes().data(), want.crossed[c][i].bytes().data(), want.crossed[c][i].nbytes()),
          0)
          << what << ": gradient " << i << " given to the cross-process hook in step " << c;
}

// Bucket sizes: one bucket per variable, a few (the model's gradients are 12 to 140
// bytes), one bucket for everything.
constexpr std::size_t kOnePerVariable = 1, kAFew = 100, kOneForAll = std::size_t{1} << 30;

void compare_buckets(int count, bool batch_norm, towers::Reduction reduction,
                     towers::Master master = towers::Master::host) {
  const Trained sync = train_towers(count, batch_norm, {.reduction = reduction, .seed = 5, .master = master});
  EXPECT_EQ(sync.times.buckets, 1);
  EXPECT_EQ(sync.times.exposed_reduce, sync.times.reduce);
  const int variables = batch_norm ? 6 : 4;
  for (const std::size_t bytes : {kOnePerVariable, kAFew, kOneForAll}) {
    const std::string what = std::to_string(count) + " towers, " + (batch_norm ? "BatchNorm, " : "") + "buckets of " +
                             std::to_string(bytes) + " bytes";
    const Trained bucketed =
        train_towers(count, batch_norm, {.reduction = reduction, .seed = 5, .master = master, .bucket_bytes = bytes});
    expect_bitwise(bucketed, sync, what);
    const int buckets = bucketed.times.buckets;
    if (bytes == kOnePerVariable) {
      EXPECT_EQ(buckets, variables) << what;
    } else if (bytes == kAFew) {
      EXPECT_TRUE(buckets > 1 && buckets < variables) << what << ": " << buckets << " buckets";
    } else {
      EXPECT_EQ(buckets, 1) << what;
    }
    EXPECT_LE(bucketed.times.exposed_reduce, bucketed.times.reduce) << what;
  }
}

TEST_F(TowersTest, BucketedReductionIsBitwiseTheSynchronousPath) {
  compare_buckets(2, false, towers::Reduction::replicated);
  compare_buckets(3, false, towers::Reduction::replicated);
}

TEST_F(TowersTest, BucketedReductionWithBatchNormIsBitwiseTheSynchronousPath) {
  compare_buckets(2, true, towers::Reduction::replicated);
  compare_buckets(3, true, towers::Reduction::replicated);
}

TEST_F(TowersTest, BucketedParameterServerIsBitwiseTheSynchronousPath) {
  // The host master applies each bucket as it is averaged, while backward goes on.
  compare_buckets(2, true, towers::Reduction::parameter_server, towers::Master::host);
  compare_buckets(2, true, towers::Reduction::parameter_server, towers::Master::device);
}

// Gradient processors need every average (a global norm): with buckets the averages are
// fed after the last one, and the run is bitwise the synchronous one, clip and all.
TEST_F(TowersTest, BucketedReductionAppliesGradientProcessorsToEveryAverage) {
  const towers::Towers::OptimizerFn clipped = [](Graph& g) {
    return apply_grad_processors(make_optimizer(g), {std::make_shared<GlobalNormClip>(0.05f)});
  };
  for (const towers::Reduction reduction : {towers::Reduction::replicated, towers::Reduction::parameter_server}) {
    const towers::TowerOptions sync{.reduction = reduction, .seed = 5};
    const Trained plain = train_towers(2, true, sync);
    const Trained sync_clipped = train_towers(2, true, sync, 0, clipped);
    EXPECT_NE(plain.costs, sync_clipped.costs) << "the clip is not active, so the test shows nothing";
    for (const std::size_t bytes : {kOnePerVariable, kOneForAll}) {
      towers::TowerOptions options = sync;
      options.bucket_bytes = bytes;
      expect_bitwise(train_towers(2, true, options, 0, clipped), sync_clipped,
                     std::string(to_string(reduction)) + ", buckets of " + std::to_string(bytes) + " bytes, clipped");
    }
  }
}

// Hyperparameters away from the defaults, so that a wrong name or operand shows. Adam's
// betas are 0.5 and 0.25 unless `exact_powers` is false: their powers are exact, on
// the host and in the shader, so its bias correction is too.
towers::Towers::OptimizerFn optimizer_of(OptimizerKind kind, bool exact_powers = true) {
  const float b1 = exact_powers ? 0.5f : 0.8f, b2 = exact_powers ? 0.25f : 0.95f;
  switch (kind) {
    case OptimizerKind::sgd: return [](Graph& g) { return sgd(g, 0.3f); };
    case OptimizerKind::momentum: return [](Graph& g) { return momentum(g, 0.3f, 0.7f); };
    case OptimizerKind::nesterov: return [](Graph& g) { return momentum(g, 0.3f, 0.7f, true); };
    case OptimizerKind::adam: return [=](Graph& g) { return adam(g, 0.3f, b1, b2, 1e-3f); };
    case OptimizerKind::adamw: return [=](Graph& g) { return adamw(g, 0.3f, 0.05f, b1, b2, 1e-3f); };
    case OptimizerKind::rmsprop: return [](Graph& g) { return rmsprop(g, 0.3f, 0.8f, 0.6f, 1e-4f); };
    case OptimizerKind::adagrad: return [](Graph& g) { return adagrad(g, 0.3f, 0.2f); };
  }
  return {};
}

// 10 steps of 2 towers with `optimizer`: a host master, a device master, replicated.
std::array<Trained, 3> train_three_ways(const towers::Towers::OptimizerFn& optimizer) {
  const auto ps = towers::Reduction::parameter_server;
  return {train_towers(2, false, {.reduction = ps, .seed = 5, .master = towers::Master::host}, 0, optimizer),
          train_towers(2, false, {.reduction = ps, .seed = 5, .master = towers::Master::device}, 0, optimizer),
          train_towers(2, false, {.seed = 5}, 0, optimizer)};
}

// Every variable of `got` within `tolerance` of `want`'s.
void expect_near(const Trained& got, const Trained& want, float tolerance, const std::string& what) {
  ASSERT_EQ(got.variables.size(), want.variables.size()) << what;
  for (const auto& [name, value] : want.variables) {
    const Array& other = got.variables.at(name);
    for (std::size_t i = 0; i < value.data<float>().size(); ++i)
      ASSERT_NEAR(other.data<float>()[i], value.data<float>()[i], tolerance) << what << ": " << name << "[" << i << "]";
  }
}

TEST_F(TowersTest, HostMasterIsBitwiseTheDeviceMasterForEveryOptimizer) {
  // The host evaluates the shader's expressions in its order, in float32, without fused
  // multiply-adds. On a CPU device (lavapipe) the shader rounds +, -, *, / and sqrt as
  // IEEE does, so the runs are bitwise equal; a GPU may divide and take square roots to
  // within a few ulp (Vulkan's precision rules) and fuse, so there they agree to 1e-5.
  const bool ieee = tower_devices(1)[0]->kind() == vk::DeviceKind::cpu;
  for (const OptimizerKind kind : {OptimizerKind::sgd, OptimizerKind::momentum, OptimizerKind::nesterov,
                                   OptimizerKind::adam, OptimizerKind::adamw, OptimizerKind::rmsprop,
                                   OptimizerKind::adagrad}) {
    const auto [host, device, replicated] = train_three_ways(optimizer_of(kind));
    const std::string what = "optimizer kind " + std::to_string(static_cast<int>(kind));
    for (const auto& [other, against] : {std::pair{&device, "device master"}, std::pair{&replicated, "replicated"}}) {
      if (ieee)
        expect_bitwise(host, *other, what + ": host master against " + against);
      else
        expect_near(host, *other, 1e-5f, what + ": host master against " + against);
    }
  }
}

TEST_F(TowersTest, HostAdamIsBitwiseTheDeviceWhateverTheBetas) {
  // Adam's step size lr sqrt(1 - b2^t) / (1 - b1^t) is computed once per step, in double,
  // by the same function for the host and for the device's scalar word
  // (graph::adam_step_factor), so betas whose f32 pow would round differently on the two
  // (0.8 and 0.95, as here; before, the device used the shader's pow and the runs differed
  // by ~1e-6) leave them bitwise equal on a CPU device.
  const bool ieee = tower_devices(1)[0]->kind() == vk::DeviceKind::cpu;
  for (const OptimizerKind kind : {OptimizerKind::adam, OptimizerKind::adamw}) {
    const auto [host, device, replicated] = train_three_ways(optimizer_of(kind, false));
    const std::string what = "optimizer kind " + std::to_string(static_cast<int>(kind));
    for (const auto& [other, against] : {std::pair{&device, "device master"}, std::pair{&replicated, "replicated"}}) {
      if (ieee)
        expect_bitwise(host, *other, what + ": host master against " + against);
      else
        expect_near(host, *other, 1e-5f, what + ": host master against " + against);
    }
  }
}

}  // namespace
}  // namespace vkp::test
