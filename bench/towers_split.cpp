#include "towers_split.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "bench_device.h"
#include "bench_models.h"
#include "core/rng.h"
#include "engine/graph/optimizer.h"
#include "towers/sync_towers.h"
#include "train/batch_split.h"

namespace vkp::bench {
namespace {

// The global batch of the MLP: x f32 [rows, 28, 28, 1], labels i32 [rows].
std::vector<Array> global_batch(std::int64_t rows) {
  Rng rng(3);
  Array x(DType::f32, Shape{rows, 28, 28, 1}), labels(DType::i32, Shape{rows});
  for (float& v : x.data<float>()) v = rng.normal();
  for (std::int32_t& v : labels.data<std::int32_t>()) v = static_cast<std::int32_t>(rng.below(10));
  return {x, labels};
}

std::unique_ptr<towers::ReplicatedTowers> replicated_towers(const std::vector<vk::Device*>& devices) {
  return std::make_unique<towers::ReplicatedTowers>(
      devices,
      [](graph::Graph& g, int) {
        const BenchModel m = mlp_model(g, graph::kUnknown);
        return towers::Tower{{m.x, m.labels}, m.loss};
      },
      [](graph::Graph& g) { return graph::momentum(g, 0.01f); }, towers::TowerOptions{.seed = 1, .time_towers = true});
}

// `steps` steps of a global batch of `batch` rows cut into `rows` (those left over sit
// out), after two steps to compile and warm up: samples per second of the median step;
// each tower's steps into `model`, when given.
double measure(towers::ReplicatedTowers& t, std::int64_t batch, const std::vector<std::int64_t>& rows, int steps,
               train::StepTimeModel* model = nullptr) {
  const std::vector<std::vector<Array>> whole{global_batch(batch)};
  std::vector<std::int64_t> cut = rows;
  std::int64_t used = 0;
  for (std::int64_t r : rows) used += r;
  if (used < batch) cut.push_back(batch - used);  // rows left out of the step
  std::vector<std::vector<Array>> parts;
  train::resplit(whole, cut, parts);
  parts.resize(rows.size());
  std::vector<double> wall;
  for (int s = 0; s < steps + 2; ++s) {
    const auto start = std::chrono::steady_clock::now();
    t.step(parts, static_cast<std::uint64_t>(s));
    if (s < 2) continue;
    wall.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    if (model != nullptr)
      for (int k = 0; k < t.size(); ++k)
        model->add(k, rows[static_cast<std::size_t>(k)], t.tower_seconds()[static_cast<std::size_t>(k)]);
  }
  std::nth_element(wall.begin(), wall.begin() + static_cast<std::ptrdiff_t>(wall.size() / 2), wall.end());
  return static_cast<double>(used) / wall[wall.size() / 2];
}

std::string rows_text(const std::vector<std::int64_t>& rows) {
  std::string s;
  for (std::size_t k = 0; k < rows.size(); ++k) s += (k == 0 ? "" : "+") + std::to_string(rows[k]);
  return s;
}

}  // namespace

void split_across_devices(int first, int second, std::int64_t batch, int steps) {
  vk::Instance& instance = bench_instance();
  vk::Device a(instance, first), b(instance, second);
  std::printf("MLP 784-256-256-10, global batch %lld a step, momentum; two towers on device %d (%s) and device %d (%s)\n",
              static_cast<long long>(batch), first, a.label().c_str(), second, b.label().c_str());
  std::printf("%-28s %10s %12s %14s %14s\n", "", "rows", "samples/s", "vs sum alone", "vs faster");
  double alone[2] = {0, 0};
  vk::Device* devices[2] = {&a, &b};
  for (int d = 0; d < 2; ++d) {
    auto t = replicated_towers({devices[d]});
    alone[d] = measure(*t, batch, {batch}, steps);
    const std::string name = "device " + std::to_string(d == 0 ? first : second) + " alone";
    std::printf("%-28s %10lld %12.0f\n", name.c_str(), static_cast<long long>(batch), alone[d]);
    // What a step costs whatever its rows: the least a tower on this device adds to a step.
    const double one_row = 1 / measure(*t, batch, {1}, steps);
    std::printf("%-28s %10d %12.0f   (%.1f ms a step)\n", name.c_str(), 1, 1 / one_row, one_row * 1e3);
  }
  const double sum = alone[0] + alone[1], faster = std::max(alone[0], alone[1]);
  auto t = replicated_towers({&a, &b});
  std::vector<std::int64_t> rows = train::split_rows(batch, std::vector<double>{1, 1});
  train::StepTimeModel model;
  model.reset(2);
  double rate = measure(*t, batch, rows, steps, &model);
  std::printf("%-28s %10s %12.0f %13.0f%% %13.0f%%\n", "equal split", rows_text(rows).c_str(), rate, 100 * rate / sum,
              100 * rate / faster);
  // As the trainer does it epoch by epoch: the next split from the model of the last ones.
  for (int round = 1; round <= 3; ++round) {
    model.end_epoch();
    rows = model.balance(batch);
    rate = measure(*t, batch, rows, steps, &model);
    std::printf("%-28s %10s %12.0f %13.0f%% %13.0f%%   (model: %.1f ms + %.3f ms a row, %.1f ms + %.3f ms a row)\n",
                ("by speed, round " + std::to_string(round)).c_str(), rows_text(rows).c_str(), rate, 100 * rate / sum,
                100 * rate / faster, 1e3 * model.fixed_seconds(0), 1e3 * model.seconds_per_row(0),
                1e3 * model.fixed_seconds(1), 1e3 * model.seconds_per_row(1));
  }
  std::printf("\n");
}

}  // namespace vkp::bench
