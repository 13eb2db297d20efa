// Kernel benchmarks: each row times one kernel by device timestamps (manual time) and
// reports, measured in the same run, the device's own peak (vk::measure_peak, first,
// printed above the table) and Eigen doing the same work on the host:
//   GFLOP/s, GB/s   vkpack's rate (GB/s: the fewest bytes the work must read and write)
//   of_fma_peak     GFLOP/s as a share of the device's float32 FMA peak
//   of_matrix_peak  the same of its matrix units' float16 peak (gemm_gpu rows that ran on
//                   them: the ceiling they are held to)
//   of_bw_peak      GB/s as a share of the device's copy bandwidth
//   of_shader_bw    GB/s as a share of a shader's copy (peak_copy.comp alone: on CPU
//                   drivers a shader's stores reach a fraction of memcpy's bandwidth)
//   eigen_ms        Eigen's median time
//   vs_eigen        vkpack time / Eigen time (below 1: vkpack is faster)
// gemm_gpu/ times each kernel of the GPU path (vk::GemmVariant) at large sizes, float32
// and float16 operands, on GPUs only.
// Run: build/bench/vkpack_bench_kernels [--device=N] [--benchmark_filter=gemm|conv|add|sum|adam]
#include <benchmark/benchmark.h>

#include <Eigen/Core>

#include <cstring>

#include "bench_device.h"
#include "core/half.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/kernels/reduce.h"
#include "engine/vk/kernels/training.h"
#include "engine/vk/recording.h"
#include "engine/vk/transfer.h"

namespace vkp::bench {
namespace {

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// Replays `recording` state.iterations() times, reporting device time per replay.
void replay(benchmark::State& state, vk::Recording& recording) {
  // Warm-up: first-use costs stay out of the figures, and a GPU's clock climbs back from
  // idle (shaders were just built): at least 0.3 s of replays (bench_device.h).
  warm_up([&] { recording.run(); }, 0.3);
  double total = 0;
  for (auto _ : state) {
    recording.run();
    const double seconds = recording.times().total_ns() * 1e-9;
    state.SetIterationTime(seconds);
    total += seconds;
  }
  state.counters["device_ms"] = benchmark::Counter(1e3 * total / static_cast<double>(state.iterations()));
  for (const auto& t : recording.times().kernel_times()) state.counters["ms_" + t.label] = t.ns * 1e-6;
}

// GFLOP/s and GB/s of one replay (`flops`, `bytes`: the work's), and their shares of the peak.
void report_rates(benchmark::State& state, double flops, double bytes) {
  const double seconds = state.counters["device_ms"].value * 1e-3;
  if (flops > 0) {
    state.counters["GFLOP/s"] = flops / seconds * 1e-9;
    state.counters["of_fma_peak"] = flops / seconds / peak().fma_flops;
  }
  state.counters["GB/s"] = bytes / seconds * 1e-9;
  state.counters["of_bw_peak"] = bytes / seconds / peak().bytes_per_second;
  state.counters["of_shader_bw"] = bytes / seconds / peak().shader_bytes_per_second;
}

void report_reference(benchmark::State& state, double eigen_seconds) {
  state.counters["eigen_ms"] = eigen_seconds * 1e3;
  state.counters["vs_eigen"] = state.counters["device_ms"].value / (eigen_seconds * 1e3);
}

void gemm(benchmark::State& state) {
  const auto m = static_cast<std::uint32_t>(state.range(0)), n = static_cast<std::uint32_t>(state.range(1)),
             k = static_cast<std::uint32_t>(state.range(2));
  const bool ta = state.range(3) != 0, tb = state.range(4) != 0;
  vk::Device& dev = device();
  vk::Arena arena(dev, vk::MemoryUse::device, "bench gemm");
  const std::vector<float> a = random_floats(std::size_t{m} * k, 1), b = random_floats(std::size_t{k} * n, 2);
  const vk::BufferSlice da = arena.allocate(a.size() * 4, "A"), db = arena.allocate(b.size() * 4, "B"),
                        dc = arena.allocate(std::size_t{m} * n * 4, "C");
  vk::upload(dev, da, std::as_bytes(std::span(a)));
  vk::upload(dev, db, std::as_bytes(std::span(b)));
  vk::GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.trans_a = ta;
  args.trans_b = tb;
  vk::Recording recording(dev, {.name = "gemm", .timestamps = true});
  const vk::BufferSlice work = arena.allocate(std::max<std::size_t>(vk::gemm_workspace_bytes(args, dev), 4), "work");
  vk::gemm(recording, args, {da, db, dc, work});
  recording.finish();
  replay(state, recording);
  if (dev.kind() == vk::DeviceKind::cpu) {
    state.counters["runs_CT"] = vk::gemm_cpu_transposes(args) ? 1 : 0;
    state.counters["k_splits"] = vk::gemm_cpu_splits(args, dev);
  }

  // Eigen on the same data: op(A) is m x k.
  const Eigen::Map<const RowMajor> ea(a.data(), ta ? k : m, ta ? m : k), eb(b.data(), tb ? n : k, tb ? k : n);
  RowMajor ec(m, n);
  const double eigen = host_seconds([&] {
    if (ta && tb) ec.noalias() = ea.transpose() * eb.transpose();
    else if (ta) ec.noalias() = ea.transpose() * eb;
    else if (tb) ec.noalias() = ea * eb.transpose();
    else ec.noalias() = ea * eb;
  });
  report_reference(state, eigen);
  report_rates(state, 2.0 * m * n * k, 4.0 * (1.0 * m * k + 1.0 * k * n + 1.0 * m * n));
}

// One kernel of the GPU path (vk::GemmVariant: 0 automatic, 1 tiled_64, 2 tiled_128,
// 3 tiled_128x64, 4 cooperative_matrix, 5 cooperative_matrix_wide, 6 cooperative_matrix_64,
// 7 tiled_128_k16, 8 cooperative_matrix_k64, 9 cooperative_matrix_4sg)
// on S x S x S, A and B float16 where f16 is 1.
void gemm_gpu(benchmark::State& state) {
  const auto s = static_cast<std::uint32_t>(state.range(0));
  const auto variant = static_cast<vk::GemmVariant>(state.range(1));
  const bool half = state.range(2) != 0;
  vk::Device& dev = device();
  if (dev.kind() == vk::DeviceKind::cpu) return state.SkipWithError("GPUs only (minutes a run on a CPU device)");
  const std::vector<vk::GemmVariant> offered = vk::gemm_gpu_variants(dev);
  if (variant != vk::GemmVariant::automatic && std::find(offered.begin(), offered.end(), variant) == offered.end())
    return state.SkipWithError("the device lacks this variant");
  if (half && !dev.features().f16_storage) return state.SkipWithError("no 16-bit storage");
  vk::Arena arena(dev, vk::MemoryUse::device, "bench gemm_gpu");
  const std::size_t count = std::size_t{s} * s;
  // Float16 values in [-1, 1), packed: random bits would hold NaNs.
  const std::vector<float> values = half ? pack_halves(random_floats(count, 7)) : random_floats(count, 7);
  vk::BufferSlice da = arena.allocate(values.size() * 4, "A"), db = arena.allocate(values.size() * 4, "B");
  const vk::BufferSlice dc = arena.allocate(count * 4, "C");
  vk::upload(dev, da, std::as_bytes(std::span(values)));
  vk::upload(dev, db, std::as_bytes(std::span(values)));
  da.f16 = db.f16 = half;
  vk::GemmArgs args;
  args.m = args.n = args.k = s;
  args.choice = vk::KernelChoice::gpu;
  args.variant = variant;
  vk::Recording recording(dev, {.name = "gemm_gpu", .timestamps = true});
  vk::gemm(recording, args, {da, db, dc, vk::BufferSlice{}});
  recording.finish();
  replay(state, recording);
  const vk::GemmVariant ran = vk::gemm_variant_for(args, da, db, dev);
  state.counters["ran_" + std::string(vk::to_string(ran))] = 1;
  const double flops = 2.0 * s * s * static_cast<double>(s);
  report_rates(state, flops, (half ? 4.0 : 8.0) * count + 4.0 * count);
  if (vk::on_matrix_units(ran) && peak().matrix_flops > 0)
    state.counters["of_matrix_peak"] = flops / (state.counters["device_ms"].value * 1e-3) / peak().matrix_flops;
}

// Implicit-GEMM convolution (vk::implicit_conv), 3x3 SAME stride 1, NHWC: one of its
// three products, x, w and dy float16 where f16 is 1 (on GPUs with matrix units,
// conv_coopmat's inputs). The reference is Eigen multiplying matrices of the im2col shapes
// (pixels x 9C by 9C x Cout), without building them: the same multiply-adds.
void conv(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0)), hw = static_cast<std::uint32_t>(state.range(1)),
             c = static_cast<std::uint32_t>(state.range(2)), cout = static_cast<std::uint32_t>(state.range(3));
  const auto product = static_cast<vk::ConvProduct>(state.range(4));
  const bool half = state.range(5) != 0;
  const vk::ConvPush g{n, hw, hw, c, hw, hw, 3, 3, 1, 1, 1, 1, 1, 1, 1};
  vk::Device& dev = device();
  if (half && !dev.features().f16_storage) return state.SkipWithError("no 16-bit storage");
  vk::Arena arena(dev, vk::MemoryUse::device, "bench conv");
  const std::size_t pixels = std::size_t{n} * hw * hw, x_size = pixels * c, y_size = pixels * cout, w_size = 9 * c * cout;
  auto filled = [&](std::size_t count, std::uint64_t seed) {
    const std::vector<float> v = half ? pack_halves(random_floats(count, seed)) : random_floats(count, seed);
    vk::BufferSlice slice = arena.allocate(std::max<std::size_t>(v.size() * 4, 16), "operand");
    vk::upload(dev, slice, std::as_bytes(std::span(v)));
    slice.f16 = half;
    return slice;
  };
  const vk::BufferSlice x = filled(x_size, 1), w = filled(w_size, 2), dy = filled(y_size, 3);
  const std::size_t result_size = product == vk::ConvProduct::forward ? y_size : product == vk::ConvProduct::filter_gradient ? w_size : x_size;
  const vk::BufferSlice result = arena.allocate(result_size * 4, "result");
  const vk::BufferSlice work = arena.allocate(std::max<std::size_t>(vk::implicit_conv_workspace_bytes(g, cout, product, dev), 16), "work");
  vk::Recording recording(dev, {.name = "conv", .timestamps = true});
  vk::implicit_conv(recording, {g, cout, product},
                    {product == vk::ConvProduct::input_gradient ? dy : x,
                     product == vk::ConvProduct::filter_gradient ? dy : w, result, work});
  recording.finish();
  replay(state, recording);
  const std::vector<float> a = random_floats(pixels * 9 * c, 4), b = random_floats(w_size, 5);
  std::vector<float> out(pixels * cout);
  const double eigen = host_seconds([&] {
    Eigen::Map<RowMajor>(out.data(), static_cast<Eigen::Index>(pixels), cout).noalias() =
        Eigen::Map<const RowMajor>(a.data(), static_cast<Eigen::Index>(pixels), 9 * c) *
        Eigen::Map<const RowMajor>(b.data(), 9 * c, cout);
  });
  report_reference(state, eigen);
  report_rates(state, 2.0 * static_cast<double>(pixels) * 9 * c * cout,
               (half ? 2.0 : 4.0) * static_cast<double>(x_size + w_size + y_size));
}

void conv_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"N", "HW", "C", "Cout", "product", "f16"});  // product: 0 forward, 1 filter gradient, 2 input gradient
  for (int f16 = 0; f16 < 2; ++f16)
    for (int p = 0; p < 3; ++p) {
      b->Args({128, 14, 32, 64, p, f16});  // the convnet's second convolution at batch 128
      b->Args({128, 28, 16, 16, p, f16});  // examples/resnet's first stage
      b->Args({128, 7, 64, 64, p, f16});   // and its last
    }
}

void add(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  vk::Device& dev = device();
  vk::Arena arena(dev, vk::MemoryUse::device, "bench add");
  const std::vector<float> a = random_floats(n, 3), b = random_floats(n, 4);
  const vk::BufferSlice da = arena.allocate(n * 4, "a"), db = arena.allocate(n * 4, "b"), dc = arena.allocate(n * 4, "c");
  vk::upload(dev, da, std::as_bytes(std::span(a)));
  vk::upload(dev, db, std::as_bytes(std::span(b)));
  vk::Recording recording(dev, {.name = "add", .timestamps = true});
  const Shape shape{static_cast<std::int64_t>(n)};
  vk::binary(recording, vk::BinaryOp::add, {shape, da}, {shape, db}, dc);
  recording.finish();
  replay(state, recording);
  std::vector<float> c(n);
  const double eigen = host_seconds([&] {
    Eigen::Map<Eigen::ArrayXf>(c.data(), static_cast<Eigen::Index>(n)) =
        Eigen::Map<const Eigen::ArrayXf>(a.data(), static_cast<Eigen::Index>(n)) +
        Eigen::Map<const Eigen::ArrayXf>(b.data(), static_cast<Eigen::Index>(n));
  });
  report_reference(state, eigen);
  report_rates(state, static_cast<double>(n), 12.0 * static_cast<double>(n));
}

void sum(benchmark::State& state) {
  const auto n = static_cast<std::uint64_t>(state.range(0));
  vk::Device& dev = device();
  vk::Arena arena(dev, vk::MemoryUse::device, "bench sum");
  const std::vector<float> a = random_floats(n, 5);
  const vk::ReduceArgs args = vk::reduce_all_args(vk::ReduceOp::sum, Shape{static_cast<std::int64_t>(n)});
  const vk::BufferSlice da = arena.allocate(n * 4, "x"), dy = arena.allocate(4, "y"),
                        work = arena.allocate(std::max<std::size_t>(vk::reduce_workspace_bytes(args, dev), 4), "work");
  vk::upload(dev, da, std::as_bytes(std::span(a)));
  vk::Recording recording(dev, {.name = "sum", .timestamps = true});
  vk::reduce(recording, args, da, dy, work);
  recording.finish();
  replay(state, recording);
  float result = 0;
  const double eigen = host_seconds([&] {
    result = Eigen::Map<const Eigen::ArrayXf>(a.data(), static_cast<Eigen::Index>(n)).sum();
    benchmark::DoNotOptimize(result);
  });
  report_reference(state, eigen);
  report_rates(state, 0, 4.0 * static_cast<double>(n));
}

// One Adam update of n variables in place (the MLP's first layer: 784 x 256), reading
// the variable, its gradient and both moments and writing three of them: 28 bytes an
// element, the least any implementation moves.
void adam(benchmark::State& state) {
  const auto n = static_cast<std::uint32_t>(state.range(0));
  vk::Device& dev = device();
  vk::Arena arena(dev, vk::MemoryUse::device, "bench adam");
  const std::vector<float> v = random_floats(n, 6), g = random_floats(n, 7), m = random_floats(n, 8);
  std::vector<float> s = random_floats(n, 9);
  for (float& x : s) x = x * x;  // a second moment is not negative
  const float lr = 1e-3f, b1 = 0.9f, b2 = 0.999f, eps = 1e-8f, step = 1e-3f;
  const std::vector<float> words = {lr, b1, b2, eps, 0.0f, step};
  const vk::BufferSlice dv = arena.allocate(n * 4ull, "v"), dg = arena.allocate(n * 4ull, "g"),
                        dm = arena.allocate(n * 4ull, "m"), ds = arena.allocate(n * 4ull, "s"),
                        dw = arena.allocate(words.size() * 4, "hyperparameters");
  vk::upload(dev, dv, std::as_bytes(std::span(v)));
  vk::upload(dev, dg, std::as_bytes(std::span(g)));
  vk::upload(dev, dm, std::as_bytes(std::span(m)));
  vk::upload(dev, ds, std::as_bytes(std::span(s)));
  vk::upload(dev, dw, std::as_bytes(std::span(words)));
  vk::Recording recording(dev, {.name = "adam", .timestamps = true});
  vk::optimizer_update(recording, vk::UpdateRule::adam, {n, 0, 1, 2, 3, 4, 5},
                       {.var = dv, .grad = dg, .slot1 = dm, .slot2 = ds, .scalars = dw});
  recording.finish();
  replay(state, recording);
  std::vector<float> hv = v, hm = m, hs = s;
  const auto map = [n](std::vector<float>& x) { return Eigen::Map<Eigen::ArrayXf>(x.data(), n); };
  const Eigen::Map<const Eigen::ArrayXf> hg(g.data(), n);
  const double eigen = host_seconds([&] {
    map(hm) = b1 * map(hm) + (1 - b1) * hg;
    map(hs) = b2 * map(hs) + (1 - b2) * hg * hg;
    map(hv) -= step * map(hm) / (map(hs).sqrt() + eps);
  });
  report_reference(state, eigen);
  report_rates(state, 0, 28.0 * n);
}

void gemm_shapes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"M", "N", "K", "tA", "tB"});
  for (int s : {256, 512, 1024, 2048}) b->Args({s, s, s, 0, 0});
  // A small convnet at batch 64 (28x28x1 -> conv5x5x32 -> pool -> conv5x5x64 -> pool -> fc 512 -> fc 10):
  // the convolutions as the GEMMs they would be over an im2col matrix (the models run them in
  // conv_regblock on CPU devices and conv_tiled on GPUs: `conv/` below), forward, and the two
  // backward products of conv2 and fc1.
  b->Args({64 * 28 * 28, 32, 25, 0, 0});      // conv1 forward
  b->Args({64 * 14 * 14, 64, 800, 0, 0});     // conv2 forward
  b->Args({64 * 14 * 14, 800, 64, 0, 1});     // conv2 input gradient
  b->Args({64 * 14 * 14, 800, 64, 0, 0});     // the same shape, B untransposed
  b->Args({800, 64, 64 * 14 * 14, 1, 0});     // conv2 weight gradient
  b->Args({800, 64, 64 * 14 * 14, 0, 0});     // the same from a transposed im2col
  b->Args({64, 512, 3136, 0, 0});             // fc1 forward
  b->Args({3136, 512, 64, 1, 0});             // fc1 weight gradient
  b->Args({64, 10, 512, 0, 0});               // fc2 forward
  // examples/resnet's first stage at batch 128 (28x28x16, 3x3 taps) the same way: forward, weight gradient.
  b->Args({128 * 28 * 28, 16, 144, 0, 0});
  b->Args({144, 16, 128 * 28 * 28, 0, 0});
}

}  // namespace
}  // namespace vkp::bench

BENCHMARK(vkp::bench::gemm)->Apply(vkp::bench::gemm_shapes)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(vkp::bench::gemm_gpu)
    ->ArgNames({"S", "variant", "f16"})  // variant: as vk::GemmVariant, in order (0 automatic)
    ->ArgsProduct({{1024, 4096}, {0, 1, 2, 3, 7}, {0}})
    ->ArgsProduct({{1024, 4096}, {0, 1, 4, 5, 6, 8, 9}, {1}})
    ->UseManualTime()
    ->Unit(benchmark::kMillisecond);
BENCHMARK(vkp::bench::conv)->Apply(vkp::bench::conv_shapes)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(vkp::bench::add)->ArgName("n")->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(vkp::bench::sum)->ArgName("n")->Arg(1 << 20)->Arg(1 << 24)->UseManualTime()->Unit(benchmark::kMillisecond);
BENCHMARK(vkp::bench::adam)->ArgName("n")->Arg(784 * 256)->Arg(1 << 22)->UseManualTime()->Unit(benchmark::kMillisecond);

int main(int argc, char** argv) {
  vkp::bench::open_device(&argc, argv);
  benchmark::Initialize(&argc, argv);
  const std::string peak = vkp::bench::peak_line();
  std::printf("%s\n", peak.c_str());
  benchmark::AddCustomContext("peak", peak);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
