#include "bench_device.h"

#include <cstdio>
#include <cstring>
#include <string>

#include "core/rng.h"

namespace vkp::bench {
namespace {

struct State {
  std::unique_ptr<vk::Instance> instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<vk::Peak> peak;
};

State& state() {
  static State s;
  return s;
}

}  // namespace

void open_device(int* argc, char** argv) {
  int index = 0;
  int out = 1;
  for (int i = 1; i < *argc; ++i) {
    if (std::strncmp(argv[i], "--device=", 9) == 0)
      index = std::stoi(argv[i] + 9);
    else
      argv[out++] = argv[i];
  }
  *argc = out;
  state().instance = std::make_unique<vk::Instance>();
  state().device = std::make_unique<vk::Device>(*state().instance, index);
}

vk::Device& device() { return *state().device; }
vk::Instance& bench_instance() { return *state().instance; }

const vk::Peak& peak() {
  if (!state().peak) state().peak = std::make_unique<vk::Peak>(vk::measure_peak(device(), 0.05));
  return *state().peak;
}

std::string peak_line() {
  const vk::Peak& p = peak();
  char line[256];
  std::snprintf(line, sizeof line,
                "peak of %s: %.0f GFLOP/s float32 FMA, %.0f GB/s copying %.0f MiB (%.1f GB/s by a shader's copy)",
                device().label().c_str(), p.fma_flops * 1e-9, p.bytes_per_second * 1e-9,
                static_cast<double>(p.copy_bytes) / (1 << 20), p.shader_bytes_per_second * 1e-9);
  std::string text = line;
  if (p.matrix_flops > 0) {
    std::snprintf(line, sizeof line, ", %.0f GFLOP/s float16 on the matrix units", p.matrix_flops * 1e-9);
    text += line;
  }
  return text;
}

std::vector<float> random_floats(std::size_t n, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<float> v(n);
  for (float& x : v) x = rng.uniform(-1.0f, 1.0f);
  return v;
}

}  // namespace vkp::bench
