// The device's own ceilings, measured: float32 multiply-add throughput, the matrix units'
// float16 rate where there are some, and memory bandwidth, so that a kernel's rate can be
// given as a share of what this device can do (vkpack_bench_kernels, vkpack_bench_graph)
// and compared across devices.
#pragma once

#include <cstdint>
#include <vector>

#include "engine/vk/device.h"
#include "engine/vk/memory.h"
#include "engine/vk/recording.h"

namespace vkp::vk {

struct Peak {
  double fma_flops = 0;       // float32 FLOPs per second (a multiply-add counts 2)
  double bytes_per_second = 0;  // bytes read plus bytes written per second, by a large copy
  // The same by peak_copy.comp alone: what a shader's loads and stores reach. On CPU
  // drivers it is far below bytes_per_second (vkCmdCopyBuffer is a memcpy; a shader's
  // store there is a loop over the SIMD lanes), on GPUs close to it.
  double shader_bytes_per_second = 0;
  std::uint64_t copy_bytes = 0;  // the size of the array copied
  // FLOPs per second of 16 x 16 x 16 float16 products summed in float32 on the matrix
  // units (VK_NV_cooperative_matrix): what gemm_coopmat's rate is a share of; 0 where
  // the device has no such units or vkpack does not enable them.
  double matrix_flops = 0;
};

// Times shaders/peak_fma.comp and shaders/peak_copy.comp by device timestamps, the best
// of several runs, growing the work until a run takes at least `min_seconds`; the
// bandwidth is the better of peak_copy.comp and vkCmdCopyBuffer (timed by the host), and
// peak_copy.comp's alone is kept too. The copy
// moves an array of at least 4x the last-level cache of any device vkpack knows (256
// MiB on GPUs, 64 MiB on CPU devices), within the device's limits. Error(unsupported)
// where the device has no timestamps. The matrix units' rate by shaders/peak_matrix.comp
// the same way, where Device::has_matrix_shape(16, 16, 16).
Peak measure_peak(Device& device, double min_seconds = 0.02);

// peak_fma.comp's value for invocation i after 8 x `iterations` rounds, computed on the host
// in the kernel's order (for tests).
float peak_fma_reference(std::uint32_t invocation, std::uint32_t iterations);

// peak_matrix.comp's value for every element it stores after 8 x `iterations` rounds
// (exact in float32 below 2^24 / 8 rounds).
float peak_matrix_reference(std::uint32_t iterations);

// Records peak_matrix.comp in `groups` workgroups of kPeakMatrixSubgroups subgroups
// into `out` (1024 floats a subgroup). Error(unsupported) without 16 x 16 x 16 units.
inline constexpr std::uint32_t kPeakMatrixSubgroups = 4;
void record_peak_matrix(Recording& recording, const BufferSlice& out, std::uint32_t groups, std::uint32_t iterations);

// Records peak_fma.comp over `invocations` (a multiple of 256) into `out`, and
// peak_copy.comp from `src` to `dst` (`bytes`, a multiple of 16, in `groups` workgroups).
void record_peak_fma(Recording& recording, const BufferSlice& out, std::uint32_t invocations, std::uint32_t iterations);
void record_peak_copy(Recording& recording, const BufferSlice& src, const BufferSlice& dst, std::uint64_t bytes,
                      std::uint32_t groups);

}  // namespace vkp::vk
