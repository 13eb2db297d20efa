// What data parallelism costs on this machine (all towers share its cores, so no
// speed-up is possible here; this measures the machinery):
//   1. host averaging bandwidth of towers::weighted_sum against memcpy of the same bytes,
//      measured in the same run;
//   2. step time of 1, 2 and 4 towers for an MLP and a convnet at a fixed batch per tower,
//      split into compute (forward, backward, read-back), host reduction and apply, on the
//      synchronous path and with the reduction overlapped with backward in buckets;
//      "exposed" is the reduction time left after the last bucket arrived;
//   3. with async: the same batches through the shared queue, the towers running free,
//      against async's step (which waits for every tower), measured in the same run.
//
//   4. with --split=I,J alone: two towers on devices I and J (two drivers) sharing the
//      global batch equally and by measured throughput, against each device alone
//      (towers_split.h);
//   5. with --sync-bn[=DEPTH] alone: two ResNet towers with synchronized BatchNorm
//      against per-tower BatchNorm (towers_sync_bn.h; --sync-batch, default 32 a tower).
//
//   vkpack_bench_towers [--device=N] [--steps=N] [--towers=1,2,4] [--bucket-kb=256]
//                       [--reduction=replicated|ps|ps-device|async]
//                       [--split=I,J [--split-batch=128]] [--sync-bn[=20] [--sync-batch=32]]
// ps keeps the parameter server's master on the host, ps-device on the first tower.
#include <omp.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "bench_device.h"
#include "bench_models.h"
#include "core/rng.h"
#include "engine/graph/layers.h"
#include "engine/graph/ops.h"
#include "towers/async_towers.h"
#include "towers/host_average.h"
#include "towers/towers.h"
#include "towers_split.h"
#include "towers_sync_bn.h"

namespace vkp::bench {
namespace {

using namespace graph;

Array random_array(DType dtype, Shape shape, std::uint64_t seed, std::int64_t classes = 10) {
  Rng rng(seed);
  Array a(dtype, shape);
  if (dtype == DType::i32)
    for (auto& v : a.data<std::int32_t>()) v = static_cast<std::int32_t>(rng.below(static_cast<std::uint64_t>(classes)));
  else
    for (auto& v : a.data<float>()) v = rng.normal();
  return a;
}

// 1. Averaging K gradient buffers of n floats against memcpy of the K inputs.
void averaging_bandwidth() {
  std::printf("host averaging (towers::weighted_sum, %d OpenMP threads) against memcpy of the same bytes\n",
              omp_get_max_threads());
  std::printf("%8s %4s %12s %12s %8s\n", "MB/tower", "K", "avg GB/s", "memcpy GB/s", "ratio");
  for (const std::size_t n : {std::size_t{270'000}, std::size_t{4'000'000}, std::size_t{16'000'000}}) {
    for (const int k : {2, 4}) {
      std::vector<std::vector<float>> in;
      for (int t = 0; t < k; ++t) in.push_back(random_floats(n, static_cast<std::uint64_t>(t)));
      std::vector<const float*> ptrs;
      for (const auto& v : in) ptrs.push_back(v.data());
      const std::vector<float> w(static_cast<std::size_t>(k), 1.0f / static_cast<float>(k));
      std::vector<float> out(n), copy(n * static_cast<std::size_t>(k));
      // Bytes moved: K buffers read, one written; memcpy moves the K buffers once.
      const double bytes = static_cast<double>(n) * sizeof(float) * k;
      const double avg = host_seconds([&] { towers::weighted_sum(ptrs, w, out.data(), n); });
      const double mem = host_seconds([&] {
        for (int t = 0; t < k; ++t)
          std::memcpy(copy.data() + static_cast<std::size_t>(t) * n, in[static_cast<std::size_t>(t)].data(), n * sizeof(float));
      });
      std::printf("%8.1f %4d %12.2f %12.2f %8.2f\n", static_cast<double>(n) * 4 / 1e6, k, bytes / avg / 1e9,
                  bytes / mem / 1e9, mem / avg);
    }
  }
  std::printf("\n");
}

struct Model {
  const char* name;
  std::int64_t batch;  // per tower
  std::function<towers::Tower(Graph&, std::int64_t)> build;
  std::vector<Shape> shapes;
};

towers::Tower mlp(Graph& g, std::int64_t batch) {
  const BenchModel m = mlp_model(g, batch);
  return {{m.x, m.labels}, m.loss};
}

towers::Tower convnet(Graph& g, std::int64_t batch) {
  const BenchModel m = convnet_model(g, batch);
  return {{m.x, m.labels}, m.loss};
}

// 3. `steps` x towers batches fed to whichever tower is free, then drained, against the
// median step of the same towers (`step_seconds`, every tower once and waited for).
void free_running(towers::AsyncTowers& t, const std::vector<std::vector<Array>>& batches, int steps, std::int64_t batch,
                  double step_seconds) {
  t.take_async_stats();  // from here on
  const auto start = std::chrono::steady_clock::now();
  const int count = steps * t.size();
  for (int s = 0; s < count; ++s) t.feed(batches[static_cast<std::size_t>(s % t.size())]);
  t.drain();
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const towers::AsyncStats stats = t.take_async_stats();
  std::printf("%6s free-running: %.0f samples/s, %.2fx the stepped rate; updates by tower:", "", count * batch / seconds,
              step_seconds * count / t.size() / seconds);
  for (std::size_t k = 0; k < stats.updates.size(); ++k)
    std::printf(" %llu (staleness mean %.2f)", static_cast<unsigned long long>(stats.updates[k]), stats.mean_staleness[k]);
  std::printf("\n");
}

// 2. Steps of K towers, each its own VkDevice on the benchmark's physical device.
void tower_steps(const Model& m, const std::vector<int>& counts, int steps, int device_index, std::size_t bucket_bytes,
                 towers::TowerOptions options) {
  std::printf("%s, batch %lld per tower, %s reduction%s; times in ms (medians)\n", m.name,
              static_cast<long long>(m.batch), towers::to_string(options.reduction),
              options.reduction != towers::Reduction::parameter_server ? ""
              : options.master == towers::Master::host                 ? " (master on the host)"
                                                                       : " (master on tower 0)");
  std::printf("%6s %8s %8s %8s %8s %8s %8s %8s %10s %8s\n", "towers", "buckets", "step", "compute", "reduce", "exposed",
              "apply", "exp/step", "samples/s", "vs 1");
  double one = 0;
  for (const int k : counts) {
    for (const std::size_t bucket : {std::size_t{0}, bucket_bytes}) {
      if (bucket > 0 && options.reduction == towers::Reduction::async) continue;  // async has no buckets
      vk::Instance& instance = bench_instance();
      std::vector<std::unique_ptr<vk::Device>> devices;
      std::vector<vk::Device*> list;
      for (int i = 0; i < k; ++i) {
        devices.push_back(std::make_unique<vk::Device>(instance, device_index));
        list.push_back(devices.back().get());
      }
      const std::unique_ptr<towers::Towers> made = towers::make_towers(
          list, [&](Graph& g, int) { return m.build(g, m.batch); }, [](Graph& g) { return momentum(g, 0.01f); },
          {.reduction = options.reduction, .seed = 1, .master = options.master, .bucket_bytes = bucket});
      towers::Towers& t = *made;
      std::vector<std::vector<Array>> batches;
      for (int i = 0; i < k; ++i)
        batches.push_back({random_array(DType::f32, m.shapes[0], 10 + static_cast<std::uint64_t>(i)),
                           random_array(DType::i32, m.shapes[1], 20 + static_cast<std::uint64_t>(i))});
      for (int s = 0; s < 2; ++s) t.step(batches, static_cast<std::uint64_t>(s));  // compile, warm up
      std::vector<double> wall, compute, reduce, exposed, apply;
      for (int s = 0; s < steps; ++s) {
        const auto start = std::chrono::steady_clock::now();
        t.step(batches, static_cast<std::uint64_t>(s + 2));
        wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
        compute.push_back(t.last_times().compute);
        reduce.push_back(t.last_times().reduce);
        exposed.push_back(t.last_times().exposed_reduce);
        apply.push_back(t.last_times().apply);
      }
      auto median = [](std::vector<double> v) {
        std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
        return v[v.size() / 2];
      };
      const double step = median(wall);
      if (k == 1 && bucket == 0) one = step;
      std::printf("%6d %8d %8.2f %8.2f %8.3f %8.3f %8.2f %7.1f%% %10.0f %8.2f\n", k, t.last_times().buckets, step * 1e3,
                  median(compute) * 1e3, median(reduce) * 1e3, median(exposed) * 1e3, median(apply) * 1e3,
                  100 * median(exposed) / step, static_cast<double>(m.batch * k) / step, one > 0 ? step / one : 0.0);
      if (options.reduction == towers::Reduction::async)
        free_running(static_cast<towers::AsyncTowers&>(t), batches, steps, m.batch, step);
    }
  }
  std::printf("\n");
}

}  // namespace
}  // namespace vkp::bench

int main(int argc, char** argv) {
  int steps = 10;
  std::vector<int> counts{1, 2, 4};
  int device_index = 0;
  std::size_t bucket_bytes = 256 << 10;
  vkp::towers::TowerOptions options;
  int split[2] = {-1, -1};
  long long split_batch = 128, sync_batch = 32;
  int sync_depth = 0;
  for (int i = 1; i < argc; ++i) {
    if (std::strncmp(argv[i], "--steps=", 8) == 0) steps = std::atoi(argv[i] + 8);
    else if (std::strncmp(argv[i], "--device=", 9) == 0) device_index = std::atoi(argv[i] + 9);
    else if (std::strncmp(argv[i], "--bucket-kb=", 12) == 0) bucket_bytes = std::size_t(std::atoi(argv[i] + 12)) << 10;
    else if (std::sscanf(argv[i], "--split=%d,%d", &split[0], &split[1]) == 2) continue;
    else if (std::sscanf(argv[i], "--split-batch=%lld", &split_batch) == 1) continue;
    else if (std::strcmp(argv[i], "--sync-bn") == 0)
      sync_depth = 20;
    else if (std::sscanf(argv[i], "--sync-bn=%d", &sync_depth) == 1)
      continue;
    else if (std::sscanf(argv[i], "--sync-batch=%lld", &sync_batch) == 1)
      continue;
    else if (std::strncmp(argv[i], "--reduction=", 12) == 0) {
      const std::string name = argv[i] + 12;
      const bool on_device = name == "ps-device";
      options.reduction = vkp::towers::parse_reduction(on_device ? "ps" : name);
      options.master = on_device ? vkp::towers::Master::device : vkp::towers::Master::host;
    } else if (std::strncmp(argv[i], "--towers=", 9) == 0) {
      counts.clear();
      for (const char* p = argv[i] + 9; *p != 0;) {
        counts.push_back(std::atoi(p));
        while (*p != 0 && *p != ',') ++p;
        if (*p == ',') ++p;
      }
    }
  }
  vkp::bench::open_device(&argc, argv);
  if (sync_depth > 0) {
    vkp::bench::sync_batch_norm_cost(device_index, sync_depth, sync_batch, steps);
    return 0;
  }
  if (split[0] >= 0) {
    vkp::bench::split_across_devices(split[0], split[1], split_batch, steps);
    return 0;
  }
  std::printf("device: %s (each tower opens its own VkDevice on it)\n\n", vkp::bench::device().label().c_str());
  vkp::bench::averaging_bandwidth();
  using vkp::Shape;
  vkp::bench::tower_steps({"MLP 784-256-256-10", 64, vkp::bench::mlp, {Shape{64, 28, 28, 1}, Shape{64}}}, counts, steps,
                          device_index, bucket_bytes, options);
  vkp::bench::tower_steps({"convnet conv32-BN-pool, conv64-BN-pool, FC128, dropout, FC10",
                           32,
                           vkp::bench::convnet,
                           {Shape{32, 28, 28, 1}, Shape{32}}},
                          counts, std::max(3, steps / 2), device_index, bucket_bytes, options);
  return 0;
}
