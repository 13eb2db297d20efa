// Engine benchmarks (a plain driver that prints tables):
//   1. host overhead of one training step of a tiny model: run a recorded program
//      (feed, submit, wait, fetch) against recording the same dispatches again every
//      step, and against compiling the program every step;
//   2. training throughput (samples/s) at batch 128 of an MLP 784-256-256-10 against
//      the same step written by hand with Eigen on the host, and of a small convnet,
//      with the share of device time per kernel family (timestamps).
// Run: build/bench/vkpack_bench_graph [--device=N] [--steps=N]
#include <Eigen/Core>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "bench_device.h"
#include "vkpack/core/rng.h"
#include "vkpack/engine/graph/layers.h"
#include "vkpack/engine/graph/optimizer.h"
#include "vkpack/engine/graph/session.h"
#include "vkpack/engine/vk/kernels/elementwise.h"

namespace vkp::bench {
namespace {

using namespace vkp::graph;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

Array random_array(DType dtype, Shape shape, std::uint64_t seed, std::int64_t classes = 10) {
  Array a(dtype, std::move(shape));
  Rng rng(seed);
  if (dtype == DType::i32)
    for (auto& v : a.data<std::int32_t>()) v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes)));
  else
    for (auto& v : a.data<float>()) v = rng.uniform(-1.0f, 1.0f);
  return a;
}

// --- 1. host overhead ---

void host_overhead(int steps) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({1, 4}));
  const Tensor labels = placeholder(g, "labels", i32({1}));
  const Tensor logits = FullyConnected("fc", x, 4);
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(logits, labels));
  const std::vector<Tensor> train = sgd(g, 0.01f).minimize(loss);
  Session session(g, device());
  const std::vector<FeedSpec> specs = {{x, f32({1, 4})}, {labels, i32({1})}};
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{1, 4}, 1), random_array(DType::i32, Shape{1}, 2, 4)};
  std::vector<Array> out;
  Program& program = session.program(specs, {loss}, train);
  for (int i = 0; i < 20; ++i) session.run_program(program, feeds, out);
  auto start = Clock::now();
  for (int i = 0; i < steps; ++i) session.run_program(program, feeds, out);
  const double replay = seconds_since(start) / steps;

  // The same number of dispatches, recorded anew every step (a fresh command buffer and
  // descriptor sets), then submitted and waited for: what a framework that does not
  // keep recordings pays per step on top of the replay.
  vk::Arena arena(device(), vk::MemoryUse::device, "rerecord");
  const vk::BufferSlice a = arena.allocate(64, "a"), b = arena.allocate(64, "b");
  const std::size_t dispatches = program.dispatch_count();
  auto record_and_run = [&] {
    vk::Recording recording(device());
    for (std::size_t i = 0; i < dispatches; ++i) vk::binary_scalar(recording, vk::BinaryOp::add, 16, i % 2 ? a : b, 1.0f, i % 2 ? b : a);
    recording.finish();
    recording.run();
  };
  for (int i = 0; i < 20; ++i) record_and_run();
  start = Clock::now();
  for (int i = 0; i < steps; ++i) record_and_run();
  const double rerecord = seconds_since(start) / steps;

  const int compile_steps = std::max(1, steps / 20);
  start = Clock::now();
  for (int i = 0; i < compile_steps; ++i) {
    auto fresh = compile(g, specs, {loss}, train, device(), session.variables(), session.scalars(), {"fresh"});
    (void)fresh;
  }
  const double compile_time = seconds_since(start) / compile_steps;

  std::printf("host overhead of a tiny training step (%zu dispatches), %d steps\n", dispatches, steps);
  std::printf("  %-44s %10.1f us\n", "replay a recorded program (feed+submit+wait+fetch)", replay * 1e6);
  std::printf("  %-44s %10.1f us   replay is %.1fx cheaper\n", "record the same dispatches again, then run", rerecord * 1e6,
              rerecord / replay);
  std::printf("  %-44s %10.1f us   replay is %.0fx cheaper\n\n", "compile the program (plan, allocate, record)",
              compile_time * 1e6, compile_time / replay);
}

// --- 2. throughput ---

struct StepStats {
  double step_seconds = 0;
  double device_seconds = 0;
  std::map<std::string, double> family_seconds;
};

std::string family_of(const std::string& label) {
  static const std::map<std::string, std::string> families = {
      {"gemm", "gemm"},        {"gemm_pack", "gemm"},       {"im2col", "im2col/col2im"}, {"col2im", "im2col/col2im"},
      {"pool", "pooling"},     {"pool_grad", "pooling"},    {"softmax", "softmax/xent"}, {"reduce", "reduce"},
      {"copy", "copy/fill"},   {"fill", "copy/fill"},       {"optimizer", "optimizer"},  {"dropout", "dropout"},
      {"cast", "cast"}};
  const auto it = families.find(label);
  return it != families.end() ? it->second : "elementwise";
}

StepStats measure(Session& session, Program& program, const std::vector<Array>& feeds, int steps) {
  std::vector<Array> out;
  for (int i = 0; i < 3; ++i) session.run_program(program, feeds, out);
  StepStats s;
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) {
    session.run_program(program, feeds, out);
    for (const vk::KernelTime& t : program.kernel_times()) {
      s.family_seconds[family_of(t.label)] += t.ns * 1e-9 / steps;
      s.device_seconds += t.ns * 1e-9 / steps;
    }
  }
  s.step_seconds = seconds_since(start) / steps;
  return s;
}

void print_stats(const char* name, int batch, const StepStats& s, double flops_per_step) {
  std::printf("%s, batch %d: %.1f ms/step, %.0f samples/s, %.2f GFLOP/s; device time %.1f ms/step:\n", name, batch,
              s.step_seconds * 1e3, batch / s.step_seconds, flops_per_step / s.step_seconds * 1e-9, s.device_seconds * 1e3);
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [family, seconds] : s.family_seconds) rows.emplace_back(seconds, family);
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [seconds, family] : rows)
    std::printf("  %-16s %5.1f%%  %8.2f ms\n", family.c_str(), 100 * seconds / s.device_seconds, seconds * 1e3);
}

// The MLP step by hand on the host: forward, softmax cross entropy, backward, SGD.
double eigen_mlp_step(int batch, int steps) {
  using Matrix = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Matrix x = Matrix::Random(batch, 784), w0 = Matrix::Random(784, 256) * 0.05f, w1 = Matrix::Random(256, 256) * 0.05f,
         w2 = Matrix::Random(256, 10) * 0.05f;
  Eigen::RowVectorXf b0 = Eigen::RowVectorXf::Zero(256), b1 = Eigen::RowVectorXf::Zero(256), b2 = Eigen::RowVectorXf::Zero(10);
  std::vector<int> labels(static_cast<std::size_t>(batch));
  for (int i = 0; i < batch; ++i) labels[static_cast<std::size_t>(i)] = i % 10;
  auto step = [&] {
    const Matrix h0 = ((x * w0).rowwise() + b0).cwiseMax(0.0f);
    const Matrix h1 = ((h0 * w1).rowwise() + b1).cwiseMax(0.0f);
    Matrix logits = (h1 * w2).rowwise() + b2;
    for (int i = 0; i < batch; ++i) {  // softmax - onehot, / batch
      auto row = logits.row(i);
      const float top = row.maxCoeff();
      row = (row.array() - top).exp();
      row /= row.sum();
      row(labels[static_cast<std::size_t>(i)]) -= 1.0f;
    }
    const Matrix d2 = logits / static_cast<float>(batch);
    const Matrix d1 = ((d2 * w2.transpose()).array() * (h1.array() > 0).cast<float>()).matrix();
    const Matrix d0 = ((d1 * w1.transpose()).array() * (h0.array() > 0).cast<float>()).matrix();
    w2 -= 0.01f * (h1.transpose() * d2);
    b2 -= 0.01f * d2.colwise().sum();
    w1 -= 0.01f * (h0.transpose() * d1);
    b1 -= 0.01f * d1.colwise().sum();
    w0 -= 0.01f * (x.transpose() * d0);
    b0 -= 0.01f * d0.colwise().sum();
  };
  for (int i = 0; i < 3; ++i) step();
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i) step();
  return seconds_since(start) / steps;
}

void mlp_throughput(int steps) {
  const int batch = 128;
  Graph g(2);
  const Tensor x = placeholder(g, "x", f32({batch, 784}));
  const Tensor labels = placeholder(g, "labels", i32({batch}));
  const Activation relu_fn = [](Tensor t) { return relu(t); };
  Tensor h = FullyConnected("fc0", x, 256, {.activation = relu_fn});
  h = FullyConnected("fc1", h, 256, {.activation = relu_fn});
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc2", h, 10), labels));
  const std::vector<Tensor> train = sgd(g, 0.01f).minimize(loss);
  Session session(g, device(), {.timestamps = true});
  Program& program = session.program({{x, f32({batch, 784})}, {labels, i32({batch})}}, {loss}, train);
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{batch, 784}, 3), random_array(DType::i32, Shape{batch}, 4)};
  const StepStats s = measure(session, program, feeds, steps);
  const double flops = 3 * 2.0 * batch * (784 * 256 + 256 * 256 + 256 * 10);  // forward + two backward GEMMs
  print_stats("MLP 784-256-256-10", batch, s, flops);
  const double eigen = eigen_mlp_step(batch, steps);
  std::printf("  Eigen on the host, same step by hand: %.2f ms/step, %.0f samples/s; vkpack/Eigen time = %.1f\n\n",
              eigen * 1e3, batch / eigen, s.step_seconds / eigen);
}

void convnet_throughput(int steps) {
  const int batch = 128;
  Graph g(3);
  const Tensor x = placeholder(g, "x", f32({batch, 28, 28, 1}));
  const Tensor labels = placeholder(g, "labels", i32({batch}));
  Tensor t = relu(BatchNorm("bn0", Conv2D("conv0", x, 32, {3, 3}, {.use_bias = false})));
  t = MaxPooling("pool0", t, {2, 2});
  t = relu(BatchNorm("bn1", Conv2D("conv1", t, 64, {3, 3}, {.use_bias = false})));
  t = MaxPooling("pool1", t, {2, 2});
  t = FullyConnected("fc0", t, 128, {.activation = [](Tensor v) { return relu(v); }});
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc1", t, 10), labels));
  const std::vector<Tensor> train = momentum(g, 0.01f).minimize(loss);
  Session session(g, device(), {.timestamps = true});
  Program& program = session.program({{x, f32({batch, 28, 28, 1})}, {labels, i32({batch})}}, {loss}, train);
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{batch, 28, 28, 1}, 5),
                                    random_array(DType::i32, Shape{batch}, 6)};
  const StepStats s = measure(session, program, feeds, steps);
  // Multiply-adds of the convolutions and FCs, times 3 (forward, input and weight gradients).
  const double macs = batch * (28.0 * 28 * 9 * 1 * 32 + 14.0 * 14 * 9 * 32 * 64 + 7.0 * 7 * 64 * 128 + 128 * 10);
  print_stats("convnet conv3x3x32-BN-relu-pool, conv3x3x64-BN-relu-pool, FC128, FC10", batch, s, 3 * 2 * macs);
  std::printf("\n");
}

}  // namespace
}  // namespace vkp::bench

int main(int argc, char** argv) {
  int steps = 20;
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--steps=", 8) == 0) steps = std::atoi(argv[i] + 8);
  vkp::bench::open_device(&argc, argv);
  std::printf("device: %s\n\n", vkp::bench::device().label().c_str());
  vkp::bench::host_overhead(std::max(steps * 50, 200));
  vkp::bench::mlp_throughput(steps);
  vkp::bench::convnet_throughput(steps);
  return 0;
}
