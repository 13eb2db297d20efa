// The peak microbenchmarks (vk::measure_peak) compute what they claim: peak_fma's chains
// against the host's multiply-adds in the kernel's order, peak_copy's copy
// element for element, peak_matrix's products summed exactly (where the device has matrix
// units), and measure_peak's rates are finite and positive.
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/kernels/peak.h"

namespace vkp::test {
namespace {

class Peak : public VkTest {};

TEST_F(Peak, TheFmaChainsAreTheHostsFusedMultiplyAdds) {
  const std::uint32_t invocations = 512, iterations = 5;  // 40 rounds
  const vk::BufferSlice out = scratch(invocations);
  vk::Recording recording(device(), {.name = "peak fma test"});
  vk::record_peak_fma(recording, out, invocations, iterations);
  recording.finish();
  recording.run();
  const std::vector<float> got = download(out, invocations);
  std::vector<double> want(invocations), tolerance(invocations);
  for (std::uint32_t i = 0; i < invocations; ++i) {
    want[i] = vk::peak_fma_reference(i, iterations);
    // GLSL's fma need not be fused (lavapipe's is not): each round may round once more,
    // and the final sum of 16 terms may be reassociated. One round more or less moves
    // the value by about 16 x 0.05 x 0.001 = 8e-4, six times this bound.
    tolerance[i] = (8.0 * iterations + 32) * std::ldexp(1.0, -23) * std::abs(want[i]);
  }
  EXPECT_EQ(compare(got, want, tolerance), "");
  // One trip of the loop more is told apart.
  EXPECT_GT(std::abs(vk::peak_fma_reference(0, iterations + 1) - vk::peak_fma_reference(0, iterations)),
            10 * tolerance[0]);
}

TEST_F(Peak, TheCopyCopiesEveryElement) {
  const std::size_t floats = 4 * 10007;  // more vec4s than the invocations: each strides
  const std::vector<float> values = random_floats(floats, 5);
  const vk::BufferSlice src = upload(values), dst = scratch(floats);
  vk::Recording recording(device(), {.name = "peak copy test"});
  vk::record_peak_copy(recording, src, dst, floats * 4, 3);
  recording.finish();
  recording.run();
  EXPECT_EQ(download(dst, floats), values);
}

TEST_F(Peak, TheMatrixChainsSumTheirProductsExactly) {
  if (!device().has_matrix_shape(16, 16, 16))
    GTEST_SKIP() << device().label() << " has no 16x16x16 float16 matrix units enabled (VK_NV_cooperative_matrix)";
  const std::uint32_t groups = 3, iterations = 7;  // 56 rounds
  const std::size_t floats = std::size_t{groups} * vk::kPeakMatrixSubgroups * 1024;
  const vk::BufferSlice out = scratch(floats);
  vk::Recording recording(device(), {.name = "peak matrix test"});
  vk::record_peak_matrix(recording, out, groups, iterations);
  recording.finish();
  recording.run();
  // Every element of every subgroup's chains (each round adds 1/256: a round more or less
  // is off by that).
  EXPECT_EQ(download(out, floats), std::vector<float>(floats, vk::peak_matrix_reference(iterations)));
}

TEST_F(Peak, MeasuredRatesArePositive) {
  if (!device().limits().timestamps) GTEST_SKIP() << device().label() << " has no timestamps";
  const vk::Peak peak = vk::measure_peak(device(), 0.002);
  EXPECT_TRUE(std::isfinite(peak.fma_flops) && peak.fma_flops > 0) << peak.fma_flops;
  EXPECT_TRUE(std::isfinite(peak.bytes_per_second) && peak.bytes_per_second > 0) << peak.bytes_per_second;
  EXPECT_TRUE(peak.shader_bytes_per_second > 0 && peak.shader_bytes_per_second <= peak.bytes_per_second)
      << peak.shader_bytes_per_second << " by the shader, " << peak.bytes_per_second << " at best";
  EXPECT_GT(peak.copy_bytes, 0u);
  EXPECT_LE(peak.copy_bytes, device().limits().max_storage_buffer_range);
  if (device().has_matrix_shape(16, 16, 16))
    EXPECT_TRUE(std::isfinite(peak.matrix_flops) && peak.matrix_flops > 0) << peak.matrix_flops;
  else
    EXPECT_EQ(peak.matrix_flops, 0.0);
}

TEST_F(Peak, BadSizesAreRefused) {
  const vk::BufferSlice out = scratch(256);
  vk::Recording recording(device(), {.name = "peak refusals"});
  EXPECT_THROW(vk::record_peak_fma(recording, out, 100, 1), Error);
  EXPECT_THROW(vk::record_peak_copy(recording, out, out, 10, 1), Error);
  EXPECT_THROW(vk::record_peak_copy(recording, out, out, 4096, 1), Error);  // beyond the slices
  EXPECT_THROW(vk::record_peak_matrix(recording, out, 1, 1), Error);        // 4096 floats; or no matrix units
}

}  // namespace
}  // namespace vkp::test
