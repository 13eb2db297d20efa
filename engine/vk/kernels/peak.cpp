#include "engine/vk/kernels/peak.h"

#include <algorithm>
#include <chrono>
#include <cmath>

#include "core/error.h"
#include "engine/vk/kernels/launch.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

constexpr float kA = 0.999f, kB = 0.001f;
constexpr float kMatrixValue = 1.0f / 64;  // both operands' elements: sums stay exact
constexpr int kRuns = 3;  // the best of these, at the final size

struct FmaPush {
  std::uint32_t iterations;
  float a, b;
};
struct CopyPush {
  std::uint32_t count;
};

// Seconds of the best of kRuns replays of `recording` (device time).
double best_of_runs(Recording& recording) {
  double best = 1e30;
  for (int r = 0; r < kRuns; ++r) {
    recording.run();
    best = std::min(best, recording.times().total_ns() * 1e-9);
  }
  return best;
}

// FLOPs per second of what `record(recording, iterations)` records, `flops_per_iteration`
// a trip of its loop: the trip count grows 4x from 8 until the best of kRuns replays
// takes `min_seconds` (or the count reaches `max_iterations`).
template <class Record>
double flop_rate(Device& device, const char* name, double min_seconds, std::uint32_t max_iterations,
                 double flops_per_iteration, Record record) {
  for (std::uint32_t iterations = 8;; iterations *= 4) {
    Recording recording(device, {.name = name, .timestamps = true});
    record(recording, iterations);
    recording.finish();
    recording.run();  // warm-up
    const double seconds = best_of_runs(recording);
    if (seconds >= min_seconds || iterations >= max_iterations)
      return flops_per_iteration * static_cast<double>(iterations) / seconds;
  }
}

double fma_rate(Device& device, double min_seconds) {
  // Enough invocations to fill any GPU (132 multiprocessors x 2048 on an H100); on a CPU
  // device a few workgroups a core.
  const std::uint32_t invocations = device.kind() == DeviceKind::cpu ? 256 * 64 : 256 * 2048;
  Arena arena(device, MemoryUse::device, "peak fma");
  const BufferSlice out = arena.allocate(std::uint64_t{invocations} * 4, "peak fma result");
  // A trip: 8 rounds of 32 FLOPs an invocation.
  return flop_rate(device, "peak fma", min_seconds, 1u << 24, 256.0 * invocations,
                   [&](Recording& r, std::uint32_t iterations) { record_peak_fma(r, out, invocations, iterations); });
}

double matrix_rate(Device& device, double min_seconds) {
  // 16 workgroups of 4 subgroups a multiprocessor on the largest GPUs vkpack knows (132 on
  // an H100): every matrix unit busy, with chains enough in flight to hide their latency.
  constexpr std::uint32_t groups = 4096;
  const std::uint32_t subgroups = groups * kPeakMatrixSubgroups;
  Arena arena(device, MemoryUse::device, "peak matrix");
  const BufferSlice out = arena.allocate(std::uint64_t{subgroups} * 1024 * 4, "peak matrix result");
  // A trip: 8 rounds of 4 chains x 2 x 16^3 FLOPs a subgroup.
  return flop_rate(device, "peak matrix", min_seconds, 1u << 20, 8.0 * 4 * 2 * 4096 * subgroups,
                   [&](Recording& r, std::uint32_t iterations) { record_peak_matrix(r, out, groups, iterations); });
}

std::uint64_t copy_bytes_for(const Device& device) {
  std::uint64_t bytes = device.kind() == DeviceKind::cpu ? std::uint64_t{64} << 20 : std::uint64_t{256} << 20;
  const DeviceLimits& l = device.limits();
  bytes = std::min({bytes, l.max_storage_buffer_range, l.max_memory_allocation_size / 2, std::uint64_t{UINT32_MAX}});
  return bytes / 16 * 16;
}

// What a copy benchmark copies: `bytes` of src into dst, in `groups` workgroups when a
// shader copies; by peak_copy.comp or by vkCmdCopyBuffer.
struct CopyRun {
  BufferSlice src, dst;
  std::uint64_t bytes = 0;
  std::uint32_t groups = 1;
};
enum class CopyBy { shader, driver };
double copy_rate(Device& device, double min_seconds, const CopyRun& run, CopyBy by);

// peak.bytes_per_second: the faster of peak_copy.comp and vkCmdCopyBuffer (a CPU
// driver's memcpy; on a GPU the driver's own copy kernel or engine);
// peak.shader_bytes_per_second: peak_copy.comp's alone.
void copy_rates(Device& device, double min_seconds, Peak& peak) {
  const std::uint64_t bytes = peak.copy_bytes;
  Arena arena(device, MemoryUse::device, "peak copy");
  const BufferSlice src = arena.allocate(bytes, "peak copy source"), dst = arena.allocate(bytes, "peak copy destination");
  // One vec4 an invocation on CPU devices (a strided loop there costs a third of the rate).
  const std::uint32_t groups =
      device.kind() == DeviceKind::cpu ? static_cast<std::uint32_t>(std::min<std::uint64_t>(bytes / 16 / 256, 65535))
                                       : 4096;
  const CopyRun run{src, dst, bytes, groups};
  peak.shader_bytes_per_second = copy_rate(device, min_seconds, run, CopyBy::shader);
  peak.bytes_per_second = std::max(peak.shader_bytes_per_second, copy_rate(device, min_seconds, run, CopyBy::driver));
}

double copy_rate(Device& device, double min_seconds, const CopyRun& run, CopyBy by) {
  const auto& [src, dst, bytes, groups] = run;
  const bool shader = by == CopyBy::shader;
  for (int copies = 1;; copies *= 2) {
    Recording recording(device, {.name = "peak copy", .timestamps = true});
    for (int c = 0; c < copies; ++c) {
      if (shader)
        record_peak_copy(recording, src, dst, bytes, groups);
      else
        recording.copy(src.sub(0, bytes), dst);
    }
    recording.finish();
    recording.run();  // warm-up
    // vkCmdCopyBuffer is timed by the host clock around the submission and wait, which
    // can only make the rate lower (as it was measured before recordings timed copies).
    double seconds = 1e30;
    if (shader) {
      seconds = best_of_runs(recording);
    } else {
      for (int r = 0; r < kRuns; ++r) {
        const auto start = std::chrono::steady_clock::now();
        recording.run();
        seconds = std::min(seconds, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
      }
    }
    if (seconds >= min_seconds || copies >= 64) return 2.0 * static_cast<double>(bytes) * copies / seconds;
  }
}

}  // namespace

void record_peak_fma(Recording& recording, const BufferSlice& out, std::uint32_t invocations, std::uint32_t iterations) {
  if (invocations % 256 != 0)
    throw Error(ErrorCode::invalid_argument, "peak_fma: invocations must be a multiple of 256");
  require_elements(out, invocations, "peak_fma", "out");
  const Kernel& kernel = recording.device().kernel(shaders::peak_fma);
  recording.dispatch(kernel, {out}, FmaPush{iterations, kA, kB}, {invocations / 256, 1, 1}, "peak_fma");
}

void record_peak_matrix(Recording& recording, const BufferSlice& out, std::uint32_t groups, std::uint32_t iterations) {
  Device& device = recording.device();
  if (!device.has_matrix_shape(16, 16, 16))
    throw Error(ErrorCode::unsupported, "peak_matrix: " + device.label() + " has no 16x16x16 float16 matrix units");
  require_elements(out, std::uint64_t{groups} * kPeakMatrixSubgroups * 1024, "peak_matrix", "out");
  const Kernel& kernel =
      device.kernel(shaders::peak_matrix, {{0, kPeakMatrixSubgroups * device.limits().subgroup_size}});
  recording.dispatch(kernel, {out}, FmaPush{iterations, kMatrixValue, kMatrixValue}, {groups, 1, 1}, "peak_matrix");
}

void record_peak_copy(Recording& recording, const BufferSlice& src, const BufferSlice& dst, std::uint64_t bytes,
                      std::uint32_t groups) {
  if (bytes % 16 != 0 || bytes / 16 > UINT32_MAX || src.size < bytes || dst.size < bytes)
    throw Error(ErrorCode::invalid_argument, "peak_copy: bytes must be a multiple of 16 within both slices");
  const BufferSlice bindings[] = {src.sub(0, bytes), dst.sub(0, bytes)};
  const Kernel& kernel = texel_kernel(recording.device(), shaders::peak_copy, shaders::peak_copy_texel, 0b01, bindings, {});
  recording.dispatch(kernel, bindings, CopyPush{static_cast<std::uint32_t>(bytes / 16)}, {groups, 1, 1}, "peak_copy");
}

float peak_fma_reference(std::uint32_t invocation, std::uint32_t iterations) {
  float s[4];
  for (int l = 0; l < 4; ++l) {
    const float start = 1.0f + static_cast<float>(invocation % 97u) / 1024.0f + static_cast<float>(l) / 4096.0f;
    float x[4] = {start, start + 1.0f / 64.0f, start + 2.0f / 64.0f, start + 3.0f / 64.0f};
    for (std::uint32_t r = 0; r < 8 * iterations; ++r)
      for (float& v : x) v = std::fma(v, kA, kB);
    s[l] = (x[0] + x[1]) + (x[2] + x[3]);
  }
  return (s[0] + s[1]) + (s[2] + s[3]);
}

float peak_matrix_reference(std::uint32_t iterations) {
  // Each product adds 16 x (1/64)^2 = 1/256 to an element, 8 x iterations times.
  return static_cast<float>(8.0 * iterations / 256.0);
}

Peak measure_peak(Device& device, double min_seconds) {
  if (!device.limits().timestamps)
    throw Error(ErrorCode::unsupported, device.label() + " has no timestamps on its compute queue: no peak to time");
  Peak peak;
  peak.fma_flops = fma_rate(device, min_seconds);
  peak.copy_bytes = copy_bytes_for(device);
  copy_rates(device, min_seconds, peak);
  if (device.has_matrix_shape(16, 16, 16)) peak.matrix_flops = matrix_rate(device, min_seconds);
  return peak;
}

}  // namespace vkp::vk
