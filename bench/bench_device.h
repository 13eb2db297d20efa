// The device the benchmarks run on, chosen with --device=N (default 0), and helpers to
// time one recording by its device timestamps and the host reference by the clock.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "engine/vk/device.h"
#include "engine/vk/instance.h"
#include "engine/vk/kernels/peak.h"
#include "engine/vk/memory.h"

namespace vkp::bench {

// Removes --device=N from argv (before benchmark::Initialize sees it) and opens that device.
void open_device(int* argc, char** argv);
vk::Device& device();
// The instance device() was opened from, for benchmarks that open more devices.
vk::Instance& bench_instance();
// The device's measured float32 FMA rate and copy bandwidth (vk::measure_peak), measured
// on first call and kept: every rate is reported as a share of these.
const vk::Peak& peak();
// "peak of device 0 (NVIDIA H100): 51234 GFLOP/s float32 FMA, 2890 GB/s copying 256 MiB"
std::string peak_line();

std::vector<float> random_floats(std::size_t n, std::uint64_t seed);

// Median seconds of fn() over enough runs to take ~min_seconds (at least 3 runs).
template <class Fn>
double host_seconds(Fn&& fn, double min_seconds = 0.3) {
  std::vector<double> runs;
  double total = 0;
  while (runs.size() < 3 || total < min_seconds) {
    const auto start = std::chrono::steady_clock::now();
    fn();
    const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    runs.push_back(s);
    total += s;
    if (runs.size() >= 50) break;
  }
  std::nth_element(runs.begin(), runs.begin() + runs.size() / 2, runs.end());
  return runs[runs.size() / 2];
}

// Runs fn() at least `min_runs` times and for at least `min_seconds`, before a timing. A
// GPU's clock follows its load: an H100 (2026-11-28) that idled while kernels were built
// ran the next ones at 345 MHz instead of 1980 and stayed low for over a second of
// light work, so a benchmark timed straight after a build measured ResNet-20's step at
// 23 ms instead of 8 (docs/benchmarks.md).
template <class Fn>
void warm_up(Fn&& fn, double min_seconds, int min_runs = 1) {
  const auto start = std::chrono::steady_clock::now();
  for (int runs = 0;
       runs < min_runs || std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < min_seconds;
       ++runs)
    fn();
}

}  // namespace vkp::bench
