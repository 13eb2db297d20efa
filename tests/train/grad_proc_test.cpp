// Gradient processors through the training interface (engine/graph/grad_proc.h): a
// ModelDesc's optimizer() wraps its optimizer with apply_grad_processors, and every
// trainer applies them: one device through their graph forms, several towers through
// their host forms after the reduction. A softmax regression with plain SGD makes the
// two comparable: two towers of 8 rows average to the gradient of the 16 rows together,
// so a clipped two-tower run equals a clipped one-tower run on the concatenated batches
// only when the clip sees the average, as tensorpack's processors do.
#include "engine/graph/grad_proc.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <map>

#include "callbacks/monitors.h"
#include "callbacks/tensor_callbacks.h"
#include "core/error.h"
#include "core/log.h"
#include "dataflow/data_from_list.h"
#include "engine/graph/collections.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "gan_fixtures.h"
#include "train/input_source.h"
#include "train/multi_device_trainer.h"
#include "train/tower_trainer.h"
#include "train_fixtures.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

using graph::GradProcPtr;

class LinearModel : public train::ModelDesc {
 public:
  explicit LinearModel(std::vector<GradProcPtr> processors, float learning_rate = 0.5f)
      : processors_(std::move(processors)), lr_(learning_rate) {}
  std::vector<train::InputSpec> inputs() const override {
    return {{"x", graph::f32({graph::kUnknown, 6})}, {"label", graph::i32({graph::kUnknown})}};
  }
  graph::Tensor build_graph(const std::vector<graph::Tensor>& in) override {
    const graph::Tensor logits = graph::FullyConnected("fc", in[0], 3);
    return graph::identity(graph::reduce_mean(graph::sparse_softmax_cross_entropy(logits, in[1])), "cost");
  }
  graph::Optimizer optimizer(graph::Graph& g) override {
    return graph::apply_grad_processors(graph::sgd(g, lr_), processors_);
  }

 private:
  std::vector<GradProcPtr> processors_;
  float lr_;
};

// Keeps the scalars and histograms it is given, by name (the last value).
class Capture : public callbacks::Monitor {
 public:
  std::map<std::string, double> scalars;
  std::map<std::string, std::vector<float>> histograms;
  void process_scalar(const std::string& name, double value, std::int64_t) override { scalars[name] = value; }
  void process_histogram(const std::string& name, std::span<const float> values, std::int64_t) override {
    histograms[name].assign(values.begin(), values.end());
  }
};

Array rows_of_both(const Array& a, const Array& b) {
  std::vector<std::int64_t> dims = a.shape().dims();
  dims[0] += b.shape()[0];
  Array out(a.dtype(), Shape(dims));
  std::memcpy(out.bytes().data(), a.bytes().data(), a.nbytes());
  std::memcpy(out.bytes().data() + a.nbytes(), b.bytes().data(), b.nbytes());
  return out;
}

// The batches of 8 rows two towers take in turn, and the same rows as batches of 16.
std::vector<dataflow::Datapoint> halves(std::size_t steps) { return tiny_batches(2 * steps, 8, 5); }
std::vector<dataflow::Datapoint> wholes(std::size_t steps) {
  const std::vector<dataflow::Datapoint> h = halves(steps);
  std::vector<dataflow::Datapoint> out;
  for (std::size_t i = 0; i < h.size(); i += 2)
    out.push_back({rows_of_both(h[i][0], h[i + 1][0]), rows_of_both(h[i][1], h[i + 1][1])});
  return out;
}

// One epoch of `steps` steps over `batches` (two towers take two batches a step).
train::TrainConfig config_of(std::vector<GradProcPtr> processors, std::vector<dataflow::Datapoint> batches,
                             std::shared_ptr<Capture> capture = nullptr, float learning_rate = 0.5f, int towers = 1) {
  train::TrainConfig c;
  c.steps_per_epoch = static_cast<std::int64_t>(batches.size()) / towers;
  c.model = std::make_shared<LinearModel>(std::move(processors), learning_rate);
  c.data = std::make_shared<train::FeedInput>(std::make_unique<dataflow::DataFromList>(std::move(batches), false));
  c.extra_callbacks = std::vector<callbacks::CallbackPtr>{};  // SummaryGradient needs none of the defaults
  c.monitors = std::vector<callbacks::MonitorPtr>{};
  if (capture) c.monitors->push_back(capture);
  c.max_epoch = 1;
  return c;
}

Array weights_after(std::vector<GradProcPtr> processors, std::size_t steps, int towers, int mode = 0) {
  std::unique_ptr<train::TowerTrainer> t;
  const std::vector<int> devices(static_cast<std::size_t>(towers), device_index());
  if (towers == 1)
    t = std::make_unique<train::SimpleTrainer>(device(), 7);
  else if (mode == 0)
    t = std::make_unique<train::SyncMultiDeviceTrainerReplicated>(instance(), devices, 7, device_options());
  else
    t = std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(
        instance(), devices, 7, device_options(),
        train::ParameterServerOptions{mode == 1 ? towers::Master::host : towers::Master::device});
  train::launch_train_with_config(
      config_of(std::move(processors), towers == 1 ? wholes(steps) : halves(steps), nullptr, 0.5f, towers), *t);
  return t->session().variable("fc/W");
}

double max_difference(const Array& a, const Array& b) {
  double d = 0;
  for (std::size_t i = 0; i < a.data<float>().size(); ++i)
    d = std::max(d, static_cast<double>(std::abs(a.data<float>()[i] - b.data<float>()[i])));
  return d;
}

// A norm bound the gradients of this model exceed at every step here.
GradProcPtr tight_clip() { return std::make_shared<graph::GlobalNormClip>(0.05f); }

TEST(GradientProcessors, SeveralTowersClipTheAveragedGradientAsOneTowerClipsTheWholeBatch) {
  const Array one = weights_after({tight_clip()}, 6, 1);
  const Array unclipped = weights_after({}, 6, 1);
  ASSERT_GT(max_difference(one, unclipped), 1e-2) << "the clip is not active, so the test shows nothing";
  const char* modes[] = {"replicated", "parameter server (host master)", "parameter server (device master)"};
  for (int mode = 0; mode < 3; ++mode)
    EXPECT_LT(max_difference(weights_after({tight_clip()}, 6, 2, mode), one), 2e-6) << modes[mode];
  // Applied once: a halving (which a second application would make a quartering) on two
  // towers is one tower's halving, in each mode.
  const GradProcPtr half =
      std::make_shared<graph::ScaleGradient>(std::vector<std::pair<std::string, float>>{{".*", 0.5f}});
  const Array one_half = weights_after({half}, 6, 1);
  ASSERT_GT(max_difference(one_half, weights_after({half, half}, 6, 1)), 1e-3);
  for (int mode = 0; mode < 3; ++mode)
    EXPECT_LT(max_difference(weights_after({half}, 6, 2, mode), one_half), 2e-6) << modes[mode] << ", halved";
}

TEST(GradientProcessors, ScaleGradientTakesTheFirstPatternThatMatches) {
  // fc/b's gradient is scaled by 0: the bias never moves (plain SGD); fc/W matches the
  // second and the third pattern, and the second decides (3, not 3 x 2).
  std::vector<GradProcPtr> frozen_bias{std::make_shared<graph::ScaleGradient>(
      std::vector<std::pair<std::string, float>>{{"fc/b", 0.0f}, {"fc/W", 3.0f}, {"fc/.*", 2.0f}})};
  train::SimpleTrainer a(device(), 7), b(device(), 7);
  train::launch_train_with_config(config_of(frozen_bias, wholes(3)), a);
  train::launch_train_with_config(config_of({}, wholes(3), nullptr, 0.0f), b);  // the initial values
  EXPECT_EQ(max_difference(a.session().variable("fc/b"), b.session().variable("fc/b")), 0.0);
  // Three times the gradient at rate 0.5, with only the weights moving: against a run at
  // rate 1.5 that freezes the bias the same way through MapGradient.
  auto zero_bias =
      std::make_shared<graph::MapGradient>([](graph::Tensor g, graph::Tensor) { return g * 0.0f; }, "fc/b");
  train::SimpleTrainer c(device(), 7);
  train::TrainConfig rate = config_of({zero_bias}, wholes(3));
  rate.model = std::make_shared<LinearModel>(std::vector<GradProcPtr>{zero_bias}, 1.5f);
  train::launch_train_with_config(std::move(rate), c);
  EXPECT_LT(max_difference(a.session().variable("fc/W"), c.session().variable("fc/W")), 1e-6);
}

// A gradient made infinite on purpose (MapGradient) stops training at the first step,
// and the error names the variable, on one device (graph form) and on two (host form).
TEST(GradientProcessors, CheckGradientNamesTheVariableWhoseGradientIsNotFinite) {
  const float inf = std::numeric_limits<float>::infinity();
  auto poison = std::make_shared<graph::MapGradient>([inf](graph::Tensor g, graph::Tensor) { return g * inf; }, "fc/b",
                                                     [inf](std::string_view, std::span<float> v) {
                                                       for (float& x : v) x *= inf;
                                                     });
  const std::vector<GradProcPtr> processors{poison, std::make_shared<graph::CheckGradient>()};
  for (int towers = 1; towers <= 2; ++towers) {
    std::unique_ptr<train::TowerTrainer> t;
    if (towers == 1)
      t = std::make_unique<train::SimpleTrainer>(device(), 7);
    else
      t = std::make_unique<train::SyncMultiDeviceTrainerReplicated>(
          instance(), std::vector<int>{device_index(), device_index()}, 7, device_options());
    try {
      train::launch_train_with_config(config_of(processors, towers == 1 ? wholes(2) : halves(2), nullptr, 0.5f, towers),
                                      *t);
      ADD_FAILURE() << "an infinite gradient trained on " << towers << " tower(s)";
    } catch (const Error& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("CheckGradient: the gradient of 'fc/b'"), std::string::npos) << what;
      EXPECT_EQ(what.find("fc/W"), std::string::npos) << what;
    }
  }
}

TEST(GradientProcessors, MapGradientWithoutAHostFormIsRefusedBySeveralTowersByName) {
  auto graph_only = std::make_shared<graph::MapGradient>([](graph::Tensor g, graph::Tensor) { return g; });
  train::SyncMultiDeviceTrainerReplicated t(instance(), {device_index(), device_index()}, 7, device_options());
  try {
    train::launch_train_with_config(config_of({graph_only}, halves(1), nullptr, 0.5f, 2), t);
    ADD_FAILURE() << "accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("MapGradient has no host form"), std::string::npos) << e.what();
  }
}

// The gradient of the mean softmax cross-entropy of x W + b by W, in double.
std::vector<double> reference_gradient(const Array& x, const Array& label, const Array& w, const Array& b) {
  const auto n = static_cast<std::size_t>(x.shape()[0]);
  std::vector<double> dw(18, 0.0);
  for (std::size_t i = 0; i < n; ++i) {
    double z[3], m = -1e300, sum = 0;
    for (int c = 0; c < 3; ++c) {
      z[c] = b.data<float>()[static_cast<std::size_t>(c)];
      for (int d = 0; d < 6; ++d) z[c] += static_cast<double>(x.data<float>()[i * 6 + d]) * w.data<float>()[d * 3 + c];
      m = std::max(m, z[c]);
    }
    for (double& v : z) sum += (v = std::exp(v - m));
    for (int c = 0; c < 3; ++c) {
      const double p = z[c] / sum - (label.data<std::int32_t>()[i] == c ? 1.0 : 0.0);
      for (int d = 0; d < 6; ++d) dw[static_cast<std::size_t>(d * 3 + c)] += x.data<float>()[i * 6 + d] * p / n;
    }
  }
  return dw;
}

// fc/W's gradient of the first step over wholes(1), on the host, at the initial weights.
std::vector<double> first_step_gradient() {
  train::SimpleTrainer initial(device(), 7);
  train::launch_train_with_config(config_of({}, wholes(1), nullptr, 0.0f), initial);
  const std::vector<dataflow::Datapoint> batch = wholes(1);
  return reference_gradient(batch[0][0], batch[0][1], initial.session().variable("fc/W"),
                            initial.session().variable("fc/b"));
}

// One device, or two towers of a parameter server (the host forms) on it.
std::unique_ptr<train::TowerTrainer> one_or_two_towers(int towers) {
  if (towers == 1) return std::make_unique<train::SimpleTrainer>(device(), 7);
  return std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(
      instance(), std::vector<int>{device_index(), device_index()}, 7, device_options());
}

// SummaryGradient reports fc/W's gradient of the epoch's last step (here its only one):
// the histogram holds the gradient a CPU reference computes, the RMS is its RMS, the
// same on one device (graph form) and on two towers (host form, the average).
TEST(GradientProcessors, SummaryGradientReportsTheGradientOnOneDeviceAndOnTowers) {
  const std::vector<double> dw = first_step_gradient();
  double squares = 0;
  for (double g : dw) squares += g * g;
  for (int towers = 1; towers <= 2; ++towers) {
    auto capture = std::make_shared<Capture>();
    const std::vector<GradProcPtr> processors{std::make_shared<graph::SummaryGradient>("fc/W")};
    const std::unique_ptr<train::TowerTrainer> t = one_or_two_towers(towers);
    train::launch_train_with_config(config_of(processors, towers == 1 ? wholes(1) : halves(1), capture, 0.5f, towers),
                                    *t);
    ASSERT_TRUE(capture->histograms.count("fc/W-grad")) << towers << " tower(s)";
    EXPECT_FALSE(capture->histograms.count("fc/b-grad"));
    const std::vector<float>& got = capture->histograms.at("fc/W-grad");
    ASSERT_EQ(got.size(), dw.size());
    for (std::size_t i = 0; i < dw.size(); ++i)
      EXPECT_NEAR(got[i], dw[i], 1e-5) << i << " on " << towers << " tower(s)";
    EXPECT_NEAR(capture->scalars.at("fc/W/rms"), std::sqrt(squares / 18.0), 1e-6) << towers << " tower(s)";
  }
}

// The mean and rms the log lines of PrintGradient or print_stat give for `label`, in order.
std::vector<std::pair<double, double>> logged_stats(const std::vector<std::string>& lines, const std::string& label) {
  std::vector<std::pair<double, double>> found;
  for (const std::string& line : lines)
    if (const std::size_t at = line.find(label + ": mean "); at != std::string::npos) {
      std::pair<double, double> stats{NAN, NAN};
      std::sscanf(line.c_str() + at + label.size(), ": mean %lf, rms %lf", &stats.first, &stats.second);
      found.push_back(stats);
    }
  return found;
}

// PrintGradient logs each matching gradient's mean and rms every step, through the graph
// on one device and on the host for towers; print_stat logs any tensor's. Checked against
// the gradient of the first step computed on the host.
TEST(GradientProcessors, PrintGradientAndPrintStatLogEveryStep) {
  const std::vector<double> dw = first_step_gradient();
  double sum = 0, squares = 0;
  for (double g : dw) sum += g, squares += g * g;
  for (int towers = 1; towers <= 2; ++towers) {
    std::vector<std::string> lines;
    const int sink = logger().add_sink([&lines](LogLevel, std::string_view line) { lines.emplace_back(line); });
    const std::unique_ptr<train::TowerTrainer> t = one_or_two_towers(towers);
    train::launch_train_with_config(config_of({std::make_shared<graph::PrintGradient>("fc/W")},
                                              towers == 1 ? wholes(2) : halves(2), nullptr, 0.5f, towers),
                                    *t);
    logger().remove_sink(sink);
    const std::vector<std::pair<double, double>> stats = logged_stats(lines, "fc/W/grad");
    ASSERT_EQ(stats.size(), 2u) << "a line each step, on " << towers << " tower(s)";
    EXPECT_NEAR(stats[0].first, sum / 18.0, 1e-6) << towers << " tower(s)";
    EXPECT_NEAR(stats[0].second, std::sqrt(squares / 18.0), 1e-6) << "the first step's, on " << towers << " tower(s)";
    EXPECT_NE(stats[1].second, stats[0].second) << "the second step's gradient is another";
    EXPECT_TRUE(logged_stats(lines, "fc/b/grad").empty()) << "fc/b does not match the pattern";
  }
}

TEST(GradientProcessors, PrintStatLogsATensorsMeanAndRmsAfterEachStep) {
  class Model : public LinearModel {
   public:
    Model() : LinearModel({}) {}
    graph::Tensor build_graph(const std::vector<graph::Tensor>& in) override {
      return LinearModel::build_graph({graph::print_stat(in[0], "input x"), in[1]});
    }
  };
  const std::vector<dataflow::Datapoint> batches = wholes(2);
  train::TrainConfig c = config_of({}, batches);
  c.model = std::make_shared<Model>();
  std::vector<std::string> lines;
  const int sink = logger().add_sink([&lines](LogLevel, std::string_view line) { lines.emplace_back(line); });
  train::SimpleTrainer t(device(), 7);
  train::launch_train_with_config(std::move(c), t);
  logger().remove_sink(sink);
  const std::span<const float> x = batches.back()[0].data<float>();  // the last step's
  double sum = 0, squares = 0;
  for (float v : x) sum += v, squares += double(v) * v;
  const std::vector<std::pair<double, double>> stats = logged_stats(lines, "input x");
  ASSERT_EQ(stats.size(), 2u) << "one line a step";
  EXPECT_NEAR(stats[1].first, sum / static_cast<double>(x.size()), 1e-5);
  EXPECT_NEAR(stats[1].second, std::sqrt(squares / static_cast<double>(x.size())), 1e-5);
}

// With loss scaling the processors see the true gradients: a clipped mixed-precision run
// follows the clipped float32 run (a clip of the scaled gradients would shrink every
// step by the scale, 2^15).
TEST(GradientProcessors, MixedPrecisionClipsTheUnscaledGradients) {
  const Array f32 = weights_after({tight_clip()}, 4, 1);
  train::SimpleTrainer t(device(), 7), still(device(), 7);
  train::TrainConfig c = config_of({tight_clip()}, wholes(4));
  c.mixed_precision = true;
  train::launch_train_with_config(std::move(c), t);
  train::launch_train_with_config(config_of({}, wholes(1), nullptr, 0.0f), still);
  const Array initial = still.session().variable("fc/W");
  EXPECT_LT(max_difference(t.session().variable("fc/W"), f32), 2e-3);
  EXPECT_GT(max_difference(t.session().variable("fc/W"), initial), 1e-2);
}

// Asynchronous towers apply the processors to each tower's gradient: scaled by 0, no
// update moves the master.
TEST(GradientProcessors, AsynchronousTowersProcessEachTowersGradient) {
  train::SimpleTrainer still(device(), 7);
  train::launch_train_with_config(config_of({}, wholes(1), nullptr, 0.0f), still);
  const std::vector<GradProcPtr> frozen{
      std::make_shared<graph::ScaleGradient>(std::vector<std::pair<std::string, float>>{{".*", 0.0f}})};
  train::AsyncMultiDeviceTrainer t(instance(), {device_index(), device_index()}, 7, 1.0f, device_options());
  train::launch_train_with_config(config_of(frozen, halves(3), nullptr, 0.5f, 2), t);
  EXPECT_EQ(max_difference(t.session().variable("fc/W"), still.session().variable("fc/W")), 0.0);
  train::AsyncMultiDeviceTrainer moving(instance(), {device_index(), device_index()}, 7, 1.0f, device_options());
  train::launch_train_with_config(config_of({}, halves(3), nullptr, 0.5f, 2), moving);
  EXPECT_GT(max_difference(moving.session().variable("fc/W"), still.session().variable("fc/W")), 1e-3);
}

// The one-dimensional GAN whose gradients matching `frozen` are scaled by 0.
class FrozenGan : public OneDimGan {
 public:
  FrozenGan(std::string frozen, std::int64_t batch) : OneDimGan(false, batch), frozen_(std::move(frozen)) {}
  graph::Optimizer optimizer(graph::Graph& g) override {
    return graph::apply_grad_processors(
        OneDimGan::optimizer(g),
        {std::make_shared<graph::ScaleGradient>(std::vector<std::pair<std::string, float>>{{frozen_, 0.0f}})});
  }

 private:
  std::string frozen_;
};

train::TrainConfig gan_config(std::shared_ptr<OneDimGan> model, int steps, int towers,
                              std::vector<callbacks::CallbackPtr> callbacks = {}) {
  train::TrainConfig c;
  c.model = std::move(model);
  c.data = std::make_shared<train::FeedInput>(
      std::make_unique<dataflow::DataFromList>(batches(steps * towers, towers == 1 ? kBatch : kBatch / 2), false));
  c.steps_per_epoch = steps;
  c.max_epoch = 1;
  c.callbacks = std::move(callbacks);
  c.extra_callbacks = std::vector<callbacks::CallbackPtr>{};
  c.monitors = std::vector<callbacks::MonitorPtr>{};
  return c;
}

// Both GAN trainers apply the optimizer's processors to both nets: the discriminator
// stays where it started while the generator trains.
TEST(GradientProcessors, GanTrainersApplyThemOnOneDeviceAndOnTowers) {
  auto nothing = std::make_shared<FrozenGan>(".*", kBatch);  // every gradient 0: the initial values
  train::GANTrainer still(device(), nothing, 3);
  train::launch_train_with_config(gan_config(nothing, 2, 1), still);
  for (int towers = 1; towers <= 2; ++towers) {
    auto model = std::make_shared<FrozenGan>("discrim/.*", towers == 1 ? kBatch : kBatch / 2);
    std::unique_ptr<train::TowerTrainer> t;
    if (towers == 1)
      t = std::make_unique<train::GANTrainer>(device(), model, 3);
    else
      t = std::make_unique<train::MultiDeviceGANTrainer>(instance(), std::vector<int>{device_index(), device_index()},
                                                         model, train::GANTowerOptions{.seed = 3}, device_options());
    train::launch_train_with_config(gan_config(model, 4, towers), *t);
    for (const char* name : {"discrim/fc0/W", "discrim/fc1/b"})
      EXPECT_EQ(max_difference(t->session().variable(name), still.session().variable(name)), 0.0)
          << name << " on " << towers << " tower(s)";
    EXPECT_GT(max_difference(t->session().variable("gen/fc0/W"), still.session().variable("gen/fc0/W")), 1e-4)
        << towers << " tower(s)";
  }
}

// WGAN's weight clipping, as tensorpack's WGAN example does it (a callback assigning
// the clipped discriminator weights after every step): RunOp expresses it.
TEST(GradientProcessors, WganWeightClippingIsARunOpEveryStep) {
  const float c = 0.01f;
  auto clip = std::make_shared<callbacks::RunOp>(
      [c](graph::Graph& g) {
        std::vector<graph::Tensor> ops;
        for (const graph::Tensor& v : g.trainable_variables())
          if (std::get<graph::VariableAttrs>(v.node().attrs).var_name.starts_with("discrim/"))
            ops.push_back(graph::assign(v, graph::clip_by_value(v, -c, c)));
        return ops;
      },
      /*run_before=*/true, /*run_as_trigger=*/false, /*run_every_step=*/true);
  for (bool clipped : {false, true}) {
    auto model = std::make_shared<OneDimGan>(false);
    train::GANTrainer t(device(), model, 3);
    std::vector<callbacks::CallbackPtr> callbacks;
    if (clipped) callbacks.push_back(clip);
    train::launch_train_with_config(gan_config(model, 4, 1, callbacks), t);
    float largest = 0;
    for (const char* name : {"discrim/fc0/W", "discrim/fc0/b", "discrim/fc1/W", "discrim/fc1/b"}) {
      const Array value = t.session().variable(name);
      for (float x : value.data<float>()) largest = std::max(largest, std::abs(x));
    }
    if (clipped)
      EXPECT_LE(largest, c);
    else
      EXPECT_GT(largest, c) << "the weights are small anyway, so the test shows nothing";
  }
}

}  // namespace
}  // namespace vkp::test
