// Engine benchmarks (a plain driver that prints tables):
//   1. host overhead of one training step of a tiny model: run a recorded program
//      (feed, submit, wait, fetch) against recording the same dispatches again every
//      step, and against compiling the program every step;
//   2. the same replayed step and an MLP training step on the device opened twice,
//      mapped and staged (as on a discrete GPU), side by side;
//   3. training throughput (samples/s) at batch 128 of an MLP 784-256-256-10 against
//      the same step written by hand with Eigen on the host, and of a small convnet,
//      with the share of device time per kernel family (timestamps);
//   4. the bundled examples' models: a step of examples/resnet's ResNet (--depth=D,
//      default 14, batch 128) and of examples/gan's DCGAN (batch 64), likewise;
//   5. examples/char_rnn's LSTM and transformer at the example's defaults (batch 32 of
//      64 characters, 128 wide; one LSTM layer, two transformer blocks), in tokens/s;
//   6. what profiling costs: the MLP and convnet steps untimed (no profiler), timed (a
//      timestamp after every kernel, as with GraphProfiler or DeviceUtilizationTracker),
//      and traced (timed, then its kernel times read and GraphProfiler's trace made).
// bench/compare_torch runs parts 3 and 4 beside the same models in PyTorch.
// Run: build/bench/vkpack_bench_graph [--device=N] [--steps=N] [--top=N] [--depth=D]
//      [--only=overhead,memory,mlp,convnet,resnet,dcgan,lstm,transformer,profiler]
// (VKPACK_MEMORY and VKPACK_LIMITS_PROFILE apply to the device of parts 1 and 3.)
#include <time.h>

#include <Eigen/Core>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "bench_device.h"
#include "bench_models.h"
#include "callbacks/profiler.h"
#include "char_model.h"
#include "core/error.h"
#include "core/rng.h"
#include "engine/graph/layers.h"
#include "engine/graph/loss_scale.h"
#include "engine/graph/optimizer.h"
#include "engine/graph/session.h"
#include "engine/vk/kernels/elementwise.h"
#include "gan_model.h"
#include "resnet_model.h"

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

struct Cost {
  double wall = 0;  // seconds per call
  double cpu = 0;   // seconds of this thread's CPU per call: the host's own work, not the
                    // wait for the device (a blocking wait uses no CPU)
};

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// Cost per call of fn, after a warm-up.
template <class Fn>
Cost per_call(int calls, Fn&& fn) {
  for (int i = 0; i < std::min(calls, 20); ++i) fn();
  const auto start = Clock::now();
  const double cpu_start = thread_cpu_seconds();
  for (int i = 0; i < calls; ++i) fn();
  return {seconds_since(start) / calls, (thread_cpu_seconds() - cpu_start) / calls};
}

// y = x + 1 on 4 floats recorded anew every call (command buffer, descriptor set), fed,
// submitted, waited for and read back through the same mapped memory. Where device memory
// is staged, the recording copies in and out as a program does.
Cost rerecorded_cost(int steps, const Array& feed, std::vector<Array>& out) {
  const bool mapped = device().memory().mapped();
  vk::Arena arena(device(), vk::MemoryUse::device, "rerecord");
  vk::Arena upload(device(), vk::MemoryUse::upload, "rerecord in"), readback(device(), vk::MemoryUse::readback, "rerecord out");
  const vk::BufferSlice in = arena.allocate(16, "x"), result = arena.allocate(16, "y");
  const vk::BufferSlice in_stage = upload.allocate(16, "x"), out_stage = readback.allocate(16, "y");
  return per_call(steps, [&] {
    std::memcpy(mapped ? in.host : in_stage.host, feed.bytes().data(), 16);
    vk::Recording recording(device());
    if (!mapped) recording.copy(in_stage, in);
    vk::binary_scalar(recording, vk::BinaryOp::add, 4, in, {1.0f}, result);
    if (!mapped) recording.copy(result, out_stage);
    recording.finish();
    recording.run();
    readback.invalidate();
    std::memcpy(out[0].bytes().data(), mapped ? result.host : out_stage.host, 16);
  });
}

// The device time of `graph`'s step compiled with a timestamp after every dispatch, the
// best of 20 replays.
double device_time(Graph& graph, const std::vector<FeedSpec>& specs, const Tensor& loss,
                   const std::vector<Tensor>& train, const std::vector<Array>& feeds) {
  Session timed_session(graph, device(), {.timestamps = true});
  Program& timed = timed_session.program(specs, {loss}, train);
  std::vector<Array> out;
  double device_seconds = 1e30;
  for (int i = 0; i < 20; ++i) {
    timed_session.run_program(timed, feeds, out);
    double total = 0;
    for (const vk::KernelTime& t : timed.kernel_times()) total += t.ns * 1e-9;
    device_seconds = std::min(device_seconds, total);
  }
  return device_seconds;
}

void host_overhead(int steps) {
  // An almost empty graph: y = x + 1 on 4 floats, one dispatch.
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({4}));
  const Tensor y = x + 1.0f;
  Session session(g, device());
  const std::vector<FeedSpec> specs = {{x, f32({4})}};
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{4}, 1)};
  std::vector<Array> out;
  Program& program = session.program(specs, {y});
  const Cost replay = per_call(steps, [&] { session.run_program(program, feeds, out); });

  const Cost rerecord = rerecorded_cost(steps, feeds[0], out);
  const Cost compiled = per_call(std::max(1, steps / 10), [&] {
    auto fresh = compile({g, specs, {y}, {}}, {device(), session.variables(), session.scalars()}, {"fresh"});
    fresh->run(feeds, out);
  });

  // A tiny training step (FC 4 -> 4, softmax cross entropy, SGD), for scale.
  Graph tg(2);
  const Tensor tx = placeholder(tg, "x", f32({1, 4}));
  const Tensor labels = placeholder(tg, "labels", i32({1}));
  const Tensor loss = reduce_mean(sparse_softmax_cross_entropy(FullyConnected("fc", tx, 4), labels));
  const std::vector<Tensor> train = sgd(tg, 0.01f).minimize(loss);
  Session train_session(tg, device());
  const std::vector<Array> train_feeds = {random_array(DType::f32, Shape{1, 4}, 1), random_array(DType::i32, Shape{1}, 2, 4)};
  Program& step = train_session.program({{tx, f32({1, 4})}, {labels, i32({1})}}, {loss}, train);
  const Cost train_replay = per_call(steps, [&] { train_session.run_program(step, train_feeds, out); });
  const Cost train_compiled = per_call(std::max(1, steps / 10), [&] {
    auto fresh = compile({tg, {{tx, f32({1, 4})}, {labels, i32({1})}}, {loss}, train},
                         {device(), train_session.variables(), train_session.scalars()}, {"fresh"});
    fresh->run(train_feeds, out);
  });

  std::printf("host overhead per step (%d steps): wall time, and this thread's CPU time\n", steps);
  std::printf("  %-52s %8s %8s %s\n", "", "wall us", "cpu us", "cpu vs replay");
  auto row = [&](const char* what, const Cost& c) {
    std::printf("  %-52s %8.1f %8.1f %6.1fx\n", what, c.wall * 1e6, c.cpu * 1e6, c.cpu / replay.cpu);
  };
  row("y = x + 1 replayed (feed, submit, wait, fetch)", replay);
  row("y = x + 1 recorded again every step", rerecord);
  row("y = x + 1 compiled every step (plan, allocate, record)", compiled);
  row("tiny training step (FC 4x4, xent, SGD) replayed", train_replay);
  row("tiny training step compiled and recorded every step", train_compiled);
  const double device_seconds = device_time(tg, {{tx, f32({1, 4})}, {labels, i32({1})}}, loss, train, train_feeds);
  // (On lavapipe a timestamp after every dispatch serializes it: the sum can exceed the
  // untimed wall time, and then the step is bound by the driver's cost per dispatch.)
  std::printf("  (the training step has %zu dispatches; with a timestamp after each, %.1f us of device time:\n"
              "   replayed wall time / device time = %.2f)\n\n",
              step.dispatch_count(), device_seconds * 1e6, train_replay.wall / device_seconds);
}

// --- 2. mapped against staged memory ---

struct ModeTimes {
  double replay = 1e30, mlp = 1e30;  // best seconds per step over the rounds
};

// One round on `dev`: the replayed y = x + 1 and the MLP training step at batch 128.
void time_mode(vk::Device& dev, int steps, ModeTimes& best) {
  Graph g(1);
  const Tensor x = placeholder(g, "x", f32({4}));
  const Tensor y = x + 1.0f;
  Session session(g, dev);
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{4}, 1)};
  std::vector<Array> out;
  Program& program = session.program({{x, f32({4})}}, {y});
  best.replay = std::min(best.replay, per_call(steps * 50, [&] { session.run_program(program, feeds, out); }).wall);

  const int batch = 128;
  Graph mg(2);
  const auto [mx, labels, loss] = mlp_model(mg, batch);
  const std::vector<Tensor> train = sgd(mg, 0.01f).minimize(loss);
  Session mlp(mg, dev);
  Program& step = mlp.program({{mx, f32({batch, 28, 28, 1})}, {labels, i32({batch})}}, {loss}, train);
  const std::vector<Array> mlp_feeds = {random_array(DType::f32, Shape{batch, 28, 28, 1}, 3),
                                        random_array(DType::i32, Shape{batch}, 4)};
  best.mlp = std::min(best.mlp, per_call(steps, [&] { mlp.run_program(step, mlp_feeds, out); }).wall);
}

void memory_modes(int steps) {
  const int index = device().info().index;
  std::unique_ptr<vk::Device> mapped;
  try {
    mapped = std::make_unique<vk::Device>(bench_instance(), index, vk::DeviceOptions{.memory = vk::MemoryMode::mapped});
  } catch (const Error& e) {
    std::printf("mapped against staged memory: skipped, %s\n\n", e.what());
    return;
  }
  vk::Device staged(bench_instance(), index, vk::DeviceOptions{.memory = vk::MemoryMode::staged});
  ModeTimes m, s;
  for (int round = 0; round < 3; ++round) {  // in turns, best of 3: the machine's noise hits both
    time_mode(*mapped, steps, m);
    time_mode(staged, steps, s);
  }
  std::printf("mapped against staged memory (the same device opened twice; best of 3 rounds, in turns)\n");
  std::printf("  %-44s %10s %10s %8s\n", "", "mapped", "staged", "staged/mapped");
  std::printf("  %-44s %8.1f us %8.1f us %8.2f\n", "y = x + 1 replayed (feed, submit, wait, fetch)", m.replay * 1e6,
              s.replay * 1e6, s.replay / m.replay);
  std::printf("  %-44s %8.2f ms %8.2f ms %8.2f\n\n", "MLP 784-256-256-10 training step, batch 128", m.mlp * 1e3,
              s.mlp * 1e3, s.mlp / m.mlp);
}

// --- 3. throughput ---

struct StepStats {
  double step_seconds = 0;
  double device_seconds = 0;
  std::map<std::string, double> family_seconds;
  std::vector<std::pair<double, std::string>> slowest;  // (seconds, "index label") of the last step
  std::size_t dispatches = 0;    // per step
  std::uint64_t arena_bytes = 0;  // the step's memory plan (tensors and kernel workspaces)
};

int g_top = 0;  // --top=N: also list the N slowest dispatches

std::string family_of(const std::string& label) {
  // clang-format off
  static const std::map<std::string, std::string> families = {
      {"gemm", "gemm"}, {"gemm_coopmat", "gemm"}, {"gemm_pack", "gemm"}, {"conv_regblock", "conv_regblock"}, {"conv_tiled", "conv_tiled"},
      {"batch_norm", "batch norm"}, {"batch_norm_reduce", "batch norm"}, {"transpose", "copy/fill"},
      {"conv_pack", "conv_pack"}, {"conv_pack_t", "conv_pack"},
      {"im2col", "im2col/col2im"}, {"col2im", "im2col/col2im"}, {"im2col_t", "im2col/col2im"},
      {"pool", "pooling"}, {"pool_grad", "pooling"}, {"softmax", "softmax/xent"}, {"reduce", "reduce"},
      {"copy", "copy/fill"}, {"fill", "copy/fill"}, {"optimizer", "optimizer"}, {"dropout", "dropout"},
      {"cast", "cast"}};
  // clang-format on
  const auto it = families.find(label);
  return it != families.end() ? it->second : "elementwise";
}

// A step is `programs` run in order (a GAN's is two), each fed `feeds`.
StepStats measure(Session& session, const std::vector<Program*>& programs, const std::vector<Array>& feeds, int steps) {
  std::vector<Array> out;
  warm_up(  // at least 3 steps and a second of them (bench_device.h: a GPU's clock)
      [&] {
        for (Program* p : programs) session.run_program(*p, feeds, out);
      },
      1.0, 3);
  StepStats s;
  const auto start = Clock::now();
  for (int i = 0; i < steps; ++i)
    for (Program* p : programs) {
      session.run_program(*p, feeds, out);
      for (const vk::KernelTime& t : p->kernel_times()) {
        s.family_seconds[family_of(t.label)] += t.ns * 1e-9 / steps;
        s.device_seconds += t.ns * 1e-9 / steps;
      }
    }
  s.step_seconds = seconds_since(start) / steps;
  for (Program* p : programs) {
    const std::vector<vk::KernelTime> last = p->kernel_times();
    for (std::size_t i = 0; i < last.size(); ++i)
      s.slowest.emplace_back(last[i].ns * 1e-9, "#" + std::to_string(i) + " " + last[i].label);
    s.dispatches += last.size();
    s.arena_bytes += p->plan().memory.arena_bytes;
  }
  std::sort(s.slowest.rbegin(), s.slowest.rend());
  return s;
}

StepStats measure(Session& session, Program& program, const std::vector<Array>& feeds, int steps) {
  return measure(session, std::vector<Program*>{&program}, feeds, steps);
}

void print_stats(const std::string& name, int batch, const StepStats& s, double flops_per_step) {
  std::printf("%s, batch %d: %.1f ms/step, %.0f samples/s, %.2f GFLOP/s; device time %.1f ms/step, %zu dispatches, "
              "memory plan %.1f MiB:\n",
              name.c_str(), batch, s.step_seconds * 1e3, batch / s.step_seconds, flops_per_step / s.step_seconds * 1e-9,
              s.device_seconds * 1e3, s.dispatches, static_cast<double>(s.arena_bytes) / (1 << 20));
  // The step against the device's own ceilings (bench_device.h, peak()): its FLOPs at
  // the FMA peak, and its memory plan read and written once at the copy bandwidth, as
  // shares of the device time the step took (100% would be the roofline).
  if (flops_per_step > 0 || s.arena_bytes > 0) {
    const double flop_seconds = flops_per_step / peak().fma_flops;
    const double byte_seconds = 2.0 * static_cast<double>(s.arena_bytes) / peak().bytes_per_second;
    std::printf("  of the peak: FLOPs at FMA peak %.3f ms (%.1f%% of device time), memory plan once at peak "
                "bandwidth %.3f ms (%.1f%%)\n",
                flop_seconds * 1e3, 100 * flop_seconds / s.device_seconds, byte_seconds * 1e3,
                100 * byte_seconds / s.device_seconds);
  }
  std::vector<std::pair<double, std::string>> rows;
  for (const auto& [family, seconds] : s.family_seconds) rows.emplace_back(seconds, family);
  std::sort(rows.rbegin(), rows.rend());
  for (const auto& [seconds, family] : rows)
    std::printf("  %-16s %5.1f%%  %8.2f ms\n", family.c_str(), 100 * seconds / s.device_seconds, seconds * 1e3);
  for (int i = 0; i < g_top && i < static_cast<int>(s.slowest.size()); ++i)
    std::printf("    slowest %-24s %8.2f ms\n", s.slowest[static_cast<std::size_t>(i)].second.c_str(),
                s.slowest[static_cast<std::size_t>(i)].first * 1e3);
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
  const auto [x, labels, loss] = mlp_model(g, batch);
  const std::vector<Tensor> train = sgd(g, 0.01f).minimize(loss);
  Session session(g, device(), {.timestamps = true});
  Program& program = session.program({{x, f32({batch, 28, 28, 1})}, {labels, i32({batch})}}, {loss}, train);
  const std::vector<Array> feeds = {random_array(DType::f32, Shape{batch, 28, 28, 1}, 3),
                                    random_array(DType::i32, Shape{batch}, 4)};
  const StepStats s = measure(session, program, feeds, steps);
  const double flops = 3 * 2.0 * batch * (784 * 256 + 256 * 256 + 256 * 10);  // forward + two backward GEMMs
  print_stats("MLP 784-256-256-10", batch, s, flops);
  const double eigen = eigen_mlp_step(batch, steps);
  std::printf("  Eigen on the host, same step by hand: %.2f ms/step, %.0f samples/s; vkpack/Eigen time = %.1f\n\n",
              eigen * 1e3, batch / eigen, s.step_seconds / eigen);
}

// The train op of `optimizer` for `cost`: plain, or with mixed precision's loss scaling.
std::vector<Tensor> train_op(const Optimizer& optimizer, Tensor cost, bool mixed) {
  return mixed ? minimize_with_loss_scaling(optimizer, cost).train_op : optimizer.minimize(cost);
}

// Mixed precision's halved tensors, after a step's table.
void print_f16(const Program& program) {
  std::printf("  (mixed precision: %d tensors, %.1f MiB, kept as float16)\n", program.plan().f16_tensors,
              static_cast<double>(program.plan().f16_bytes) / (1 << 20));
}

void convnet_throughput(int steps) {
  const int batch = 128;
  for (bool mixed : {false, true}) {
    Graph g(3);
    const auto [x, labels, loss] = convnet_model(g, batch);
    const std::vector<Tensor> train = train_op(momentum(g, 0.01f), loss, mixed);
    Session session(g, device(), {.timestamps = true, .f16_storage = mixed});
    Program& program = session.program({{x, f32({batch, 28, 28, 1})}, {labels, i32({batch})}}, {loss}, train);
    const std::vector<Array> feeds = {random_array(DType::f32, Shape{batch, 28, 28, 1}, 5),
                                      random_array(DType::i32, Shape{batch}, 6)};
    const StepStats s = measure(session, program, feeds, steps);
    // Multiply-adds of the convolutions and FCs, times 3 (forward, input and weight gradients).
    const double macs = batch * (28.0 * 28 * 9 * 1 * 32 + 14.0 * 14 * 9 * 32 * 64 + 7.0 * 7 * 64 * 128 + 128 * 10);
    print_stats(std::string("convnet conv3x3x32-BN-relu-pool, conv3x3x64-BN-relu-pool, FC128, dropout, FC10") +
                    (mixed ? " in mixed precision" : ""),
                batch, s, 3 * 2 * macs);
    if (mixed) print_f16(program);
    std::printf("\n");
  }
}

// A ModelDesc's inputs in `g`: placeholders, their specs at `batch` (an unknown first
// extent), and random feeds of those types (labels below 10).
struct ModelInputs {
  std::vector<Tensor> placeholders;
  std::vector<FeedSpec> specs;
  std::vector<Array> feeds;
};

ModelInputs model_inputs(Graph& g, const train::ModelDesc& model, std::int64_t batch) {
  ModelInputs m;
  std::uint64_t seed = 7;
  for (const train::InputSpec& spec : model.inputs()) {
    m.placeholders.push_back(placeholder(g, spec.name, spec.type));
    TensorType type = spec.type;
    if (type.dims[0] < 0) type.dims[0] = batch;
    m.specs.push_back({m.placeholders.back(), type});
    Array a = random_array(type.dtype, Shape(type.dims), seed++);
    if (type.dtype == DType::i32)
      for (std::int32_t& v : a.data<std::int32_t>()) v = std::abs(v) % 10;
    m.feeds.push_back(std::move(a));
  }
  return m;
}

// examples/resnet's model (Momentum), one training step of `depth` layers at batch 128.
void resnet_throughput(int steps, int depth, bool mixed) {
  const int batch = 128;
  Graph g(4);
  examples::PreactResNet model(examples::find_image_set({}), (depth - 2) / 6, 0.1f);
  const ModelInputs in = model_inputs(g, model, batch);
  Tensor cost;
  {
    TowerContext training(g, "", 0, true);
    cost = model.build_graph(in.placeholders);
  }
  const std::vector<Tensor> train = train_op(model.optimizer(g), cost, mixed);  // with the update ops
  Session session(g, device(), {.timestamps = true, .f16_storage = mixed});
  Program& program = session.program(in.specs, {cost}, train);
  const StepStats s = measure(session, program, in.feeds, steps);
  // Multiply-adds of the convolutions (conv0, then n units of two per stage; a stage's
  // first conv halves the resolution from the second stage on) and the linear layer.
  const int n = (depth - 2) / 6;
  double macs = 28.0 * 28 * 9 * 1 * 16 + 2 * n * 28.0 * 28 * 9 * 16 * 16;
  macs += 14.0 * 14 * 9 * 16 * 32 + (2 * n - 1) * 14.0 * 14 * 9 * 32 * 32;
  macs += 7.0 * 7 * 9 * 32 * 64 + (2 * n - 1) * 7.0 * 7 * 9 * 64 * 64 + 64 * 10;
  print_stats("ResNet-" + std::to_string(depth) + " (examples/resnet, pre-activation, Momentum)" +
                  (mixed ? " in mixed precision" : ""),
              batch, s, 3 * 2 * batch * macs);
  if (mixed) print_f16(program);
  std::printf("\n");
}

// examples/gan's conditional DCGAN (Adam), a step as GANTrainer runs it: the
// discriminator's update, then the generator's with the update ops.
void dcgan_throughput(int steps) {
  const int batch = 64;
  Graph g(5);
  examples::ConditionalGan model(batch, 2e-4f);
  const ModelInputs in = model_inputs(g, model, batch);
  {
    TowerContext training(g, "", 0, true);
    model.build_graph(in.placeholders);
  }
  std::vector<Tensor> g_vars, d_vars;
  for (const Tensor& v : g.trainable_variables())
    (std::get<VariableAttrs>(v.node().attrs).var_name.rfind("gen/", 0) == 0 ? g_vars : d_vars).push_back(v);
  const Optimizer opt = model.optimizer(g);
  const std::vector<Tensor> d_train = opt.minimize(model.d_loss(), d_vars, {});
  std::vector<Tensor> g_train = opt.minimize(model.g_loss(), g_vars, {});
  const std::vector<Tensor> updates = g.collection(kUpdateOps);
  g_train.insert(g_train.end(), updates.begin(), updates.end());
  Session session(g, device(), {.timestamps = true});
  Program& d_step = session.program(in.specs, {model.d_loss()}, d_train);
  Program& g_step = session.program(in.specs, {model.g_loss()}, g_train);
  const StepStats s = measure(session, {&d_step, &g_step}, in.feeds, steps);
  print_stats("conditional DCGAN (examples/gan: D update, then G update)", batch, s, 0);
  std::printf("\n");
}

// examples/char_rnn's model (Adam) at the example's defaults, one training step.
void char_model_throughput(int steps, examples::CharModelKind kind) {
  examples::CharModelConfig config;
  config.kind = kind;
  config.vocab = 114;  // the byte vocabulary of Debian's fortunes
  config.layers = kind == examples::CharModelKind::transformer ? 2 : 1;
  Graph g(6);
  examples::CharModel model(config);
  const ModelInputs in = model_inputs(g, model, config.batch);
  Tensor cost;
  {
    TowerContext training(g, "", 0, true);
    cost = model.build_graph(in.placeholders);
  }
  const std::vector<Tensor> train = model.optimizer(g).minimize(cost);
  Session session(g, device(), {.timestamps = true});
  Program& program = session.program(in.specs, {cost}, train);
  const StepStats s = measure(session, program, in.feeds, steps);
  const auto batch = static_cast<int>(config.batch);
  print_stats(std::string("char model: ") + examples::to_string(kind) + " (examples/char_rnn defaults, Adam)", batch, s, 0);
  std::printf("  %.0f tokens/s (%lld characters a step)\n\n", static_cast<double>(config.batch * config.length) / s.step_seconds,
              static_cast<long long>(config.batch * config.length));
}

// --- 6. profiling ---

// A step untimed, timed and traced, in turns, best of 3 rounds (noise hits all three).
void profiler_cost(const char* name, Graph& g, const std::vector<FeedSpec>& specs, Tensor loss,
                   const std::vector<Tensor>& train, const std::vector<Array>& feeds, int steps) {
  Session session(g, device());
  Program& untimed = session.program(specs, {loss}, train);
  session.set_timestamps(true);
  Program& timed = session.program(specs, {loss}, train);
  std::vector<Array> out;
  double best[3] = {1e30, 1e30, 1e30};
  std::size_t trace_bytes = 0;
  for (int round = 0; round < 3; ++round)
    for (int mode = 0; mode < 3; ++mode) {
      Program& p = mode == 0 ? untimed : timed;
      for (int i = 0; i < 2; ++i) session.run_program(p, feeds, out);
      const auto start = Clock::now();
      for (int i = 0; i < steps; ++i) {
        const auto step_begin = Clock::now();
        session.run_program(p, feeds, out);
        if (mode < 2) continue;
        callbacks::StepProfile profile{i, step_begin, Clock::now(), {}};
        std::vector<HostSpan> host = p.host_spans().since(step_begin);
        const auto submit =
            std::find_if(host.begin(), host.end(), [](const HostSpan& h) { return h.kind == HostSpan::Kind::submit; });
        profile.runs.push_back({0, device().label(), host, p.kernel_times(), submit->begin});
        trace_bytes = callbacks::chrome_trace({profile}, start).size();
      }
      best[mode] = std::min(best[mode], seconds_since(start) / steps);
    }
  std::printf("  %-36s %9.2f ms %9.2f ms %9.2f ms %8.3f %8.3f  (%zu kernels, trace %zu kB)\n", name, best[0] * 1e3,
              best[1] * 1e3, best[2] * 1e3, best[1] / best[0], best[2] / best[0], timed.dispatch_count(),
              trace_bytes / 1024);
}

void profiler_overhead(int steps) {
  std::printf("what profiling costs a training step, batch 128 (best of 3 rounds, in turns)\n");
  std::printf("  %-36s %12s %12s %12s %8s %8s\n", "", "untimed", "timed", "traced", "timed/", "traced/");
  {
    Graph g(2);
    const auto [x, labels, loss] = mlp_model(g, 128);
    const std::vector<Tensor> train = sgd(g, 0.01f).minimize(loss);
    profiler_cost("MLP 784-256-256-10", g, {{x, f32({128, 28, 28, 1})}, {labels, i32({128})}}, loss, train,
                  {random_array(DType::f32, Shape{128, 28, 28, 1}, 3), random_array(DType::i32, Shape{128}, 4)}, steps);
  }
  Graph g(3);
  const auto [x, labels, loss] = convnet_model(g, 128);
  const std::vector<Tensor> train = momentum(g, 0.01f).minimize(loss);
  profiler_cost("convnet (part 3's)", g, {{x, f32({128, 28, 28, 1})}, {labels, i32({128})}}, loss, train,
                {random_array(DType::f32, Shape{128, 28, 28, 1}, 5), random_array(DType::i32, Shape{128}, 6)}, steps);
  std::printf("\n");
}

}  // namespace
}  // namespace vkp::bench

int main(int argc, char** argv) {
  int steps = 20, depth = 14;
  std::string only;  // --only=a,b: these sections (overhead, ..., dcgan, lstm, transformer)
  for (int i = 1; i < argc; ++i)
    if (std::strncmp(argv[i], "--steps=", 8) == 0) steps = std::atoi(argv[i] + 8);
    else if (std::strncmp(argv[i], "--top=", 6) == 0) vkp::bench::g_top = std::atoi(argv[i] + 6);
    else if (std::strncmp(argv[i], "--only=", 7) == 0) only = std::string(",") + (argv[i] + 7) + ",";
    else if (std::strncmp(argv[i], "--depth=", 8) == 0) depth = std::atoi(argv[i] + 8);
  const auto run = [&](const char* section) { return only.empty() || only.find(std::string(",") + section + ",") != std::string::npos; };
  vkp::bench::open_device(&argc, argv);
  std::printf("device: %s\n%s\n\n", vkp::bench::device().label().c_str(), vkp::bench::peak_line().c_str());
  if (run("overhead")) vkp::bench::host_overhead(std::max(steps * 50, 200));
  if (run("memory")) vkp::bench::memory_modes(steps);
  if (run("mlp")) vkp::bench::mlp_throughput(steps);
  if (run("convnet")) vkp::bench::convnet_throughput(steps);
  // The examples' models take seconds a step on a CPU: fewer steps.
  if (run("resnet"))
    for (bool mixed : {false, true}) vkp::bench::resnet_throughput(std::max(2, steps / 4), depth, mixed);
  if (run("dcgan")) vkp::bench::dcgan_throughput(std::max(2, steps / 4));
  if (run("lstm")) vkp::bench::char_model_throughput(std::max(2, steps / 4), vkp::examples::CharModelKind::lstm);
  if (run("transformer"))
    vkp::bench::char_model_throughput(std::max(2, steps / 4), vkp::examples::CharModelKind::transformer);
  if (run("profiler")) vkp::bench::profiler_overhead(steps);
  return 0;
}
