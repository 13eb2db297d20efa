#include "towers_sync_bn.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <vector>

#include "bench_device.h"
#include "core/rng.h"
#include "resnet_model.h"
#include "towers/sync_towers.h"

namespace vkp::bench {
namespace {

using Clock = std::chrono::steady_clock;

struct Run {
  std::vector<std::unique_ptr<vk::Device>> devices;
  std::unique_ptr<towers::Towers> towers;
  std::vector<std::vector<Array>> batches;
  int exchanges = 0;
};

Run make_run(int device_index, int depth, std::int64_t batch, bool sync) {
  Run r;
  std::vector<vk::Device*> list;
  for (int k = 0; k < 2; ++k) {
    r.devices.push_back(std::make_unique<vk::Device>(bench_instance(), device_index));
    list.push_back(r.devices.back().get());
  }
  const examples::ImageSet images = examples::find_image_set({});
  auto model = std::make_shared<examples::PreactResNet>(images, (depth - 2) / 6, 0.1f, sync);
  r.towers = towers::make_towers(
      list,
      [model](graph::Graph& g, int) {
        std::vector<graph::Tensor> in;
        for (const train::InputSpec& spec : model->inputs()) in.push_back(graph::placeholder(g, spec.name, spec.type));
        return towers::Tower{in, model->build_graph(in)};
      },
      [model](graph::Graph& g) { return model->optimizer(g); }, {.seed = 1});
  for (std::uint64_t k = 0; k < 2; ++k) {
    std::vector<Array> b;
    for (const train::InputSpec& spec : model->inputs()) {
      std::vector<std::int64_t> dims = spec.type.dims;
      dims[0] = batch;
      Array a(spec.type.dtype, Shape(dims));
      Rng rng(7 + k);
      if (spec.type.dtype == DType::i32)
        for (auto& v : a.data<std::int32_t>()) v = static_cast<std::int32_t>(rng.below(10));
      else
        for (auto& v : a.data<float>()) v = rng.uniform();
      b.push_back(std::move(a));
    }
    r.batches.push_back(std::move(b));
  }
  for (std::uint64_t s = 0; s < 2; ++s) r.towers->step(r.batches, s);  // compile, warm up
  return r;
}

double median_step(Run& r, int steps) {
  std::vector<double> wall;
  for (int s = 0; s < steps; ++s) {
    const auto start = Clock::now();
    r.towers->step(r.batches, static_cast<std::uint64_t>(s + 2));
    wall.push_back(std::chrono::duration<double>(Clock::now() - start).count());
  }
  std::nth_element(wall.begin(), wall.begin() + static_cast<std::ptrdiff_t>(wall.size() / 2), wall.end());
  return wall[wall.size() / 2];
}

}  // namespace

void sync_batch_norm_cost(int device_index, int depth, std::int64_t batch, int steps) {
  std::printf(
      "synchronized BatchNorm: ResNet-%d (examples/resnet), 2 replicated towers of %lld images; "
      "median step of %d, best of 3 rounds in turns\n",
      depth, static_cast<long long>(batch), steps);
  Run own = make_run(device_index, depth, batch, false), sync = make_run(device_index, depth, batch, true);
  double t_own = 1e30, t_sync = 1e30;
  for (int round = 0; round < 3; ++round) {
    t_own = std::min(t_own, median_step(own, steps));
    t_sync = std::min(t_sync, median_step(sync, steps));
  }
  const int layers = 3 * ((depth - 2) / 6) * 2 + 1;  // BN-relu: conv0's, two per unit but the first's, bnlast
  std::printf("  %-34s %10.2f ms\n", "per-tower BatchNorm", t_own * 1e3);
  std::printf("  %-34s %10.2f ms  (%d BatchNorm layers, %d exchanges a step)\n", "sync_statistics", t_sync * 1e3,
              layers, 2 * layers);
  std::printf("  sync / per-tower step time: %.3f\n\n", t_sync / t_own);
}

}  // namespace vkp::bench
