// Every kernel of gemm's GPU path (vk::GemmVariant) against the double-precision
// reference, on every device: the tilings of gemm_tiled anywhere, those of gemm_coopmat
// where the device has matrix units (VK_NV_cooperative_matrix; skipped, with the
// reason, elsewhere). Shapes are not multiples of any tile.
//
// Tolerances: the tilings sum in float32 in their own order, so they get gemm_test.cpp's
// probabilistic bound. The matrix units multiply float16 operands exactly into float32
// but need not round their sums to nearest (NVIDIA's truncate), so gemm_coopmat gets the
// worst-case bound for an inner product of k terms with unit roundoff 2^-23,
// (k + 2) 2^-23 (sum_p |alpha a_ip b_pj| + |beta c|), against a reference on the
// operands rounded to float16 as the kernel reads them; a float16 C adds one rounding
// of the result, 2^-11 |c|.
#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "reference.h"
#include "vk_test_env.h"
#include "core/error.h"
#include "engine/vk/kernels/gemm.h"

namespace vkp::test {
namespace {

using vk::GemmVariant;

bool offered(GemmVariant variant) {
  const std::vector<GemmVariant> all = vk::gemm_gpu_variants(device());
  return std::find(all.begin(), all.end(), variant) != all.end();
}

struct Storage {
  bool half_ab = false, half_c = false;  // where the operands and C hold float16
};

class GemmVariantTest : public VkTest, public ::testing::WithParamInterface<GemmVariant> {
 protected:
  void SetUp() override {
    if (!offered(GetParam()))
      GTEST_SKIP() << device().label() << " has no " << vk::to_string(GetParam())
                   << " (needs VK_NV_cooperative_matrix with 16x16x16 float16 products into float32)";
  }

  // Runs args (variant GetParam(), GPU path) on random data and checks every element of
  // C against the reference; elements of C outside the result must keep their value.
  void check(vk::GemmArgs args, std::size_t a_count, std::size_t b_count, std::size_t c_count, std::uint64_t seed,
             Storage storage = {}) {
    args.choice = vk::KernelChoice::gpu;
    args.variant = GetParam();
    const bool matrix_units = vk::on_matrix_units(GetParam());
    std::vector<float> a = random_floats(a_count, seed), b = random_floats(b_count, seed + 1);
    if (matrix_units || storage.half_ab) {
      a = rounded_to_half(a);
      b = rounded_to_half(b);
    }
    std::vector<float> c0 = args.beta != 0 ? random_floats(c_count, seed + 2) : std::vector<float>(c_count, std::nanf(""));
    if (storage.half_c) c0 = rounded_to_half(c0);
    const vk::BufferSlice da = put(a, storage.half_ab), db = put(b, storage.half_ab), dc = put(c0, storage.half_c);
    vk::Recording recording(device(), {.name = "gemm variant test"});
    vk::gemm(recording, args, {da, db, dc, vk::BufferSlice{}});
    recording.finish();
    recording.run();
    const std::vector<float> got = get(dc, c_count);
    std::vector<double> want(c0.begin(), c0.end()), magnitude;
    gemm_reference(args, a, b, want, magnitude);
    EXPECT_EQ(compare_gemm(got, c0, want, magnitude,
                           [&](double m, double w) {
                             double bound = matrix_units ? (args.k + 2.0) * std::ldexp(1.0, -23) * m
                                                         : 8.0 * std::sqrt(args.k + 2.0) * std::ldexp(1.0, -24) * m;
                             if (storage.half_c) bound += std::ldexp(1.0, -11) * std::abs(w) + std::ldexp(1.0, -24);
                             return bound + 1e-30;
                           }),
              "");
  }
};

struct Shape3 {
  std::uint32_t m, n, k;
};

TEST_P(GemmVariantTest, AwkwardShapesInEveryTransposition) {
  const Shape3 shapes[] = {{1, 1, 1}, {7, 65, 33}, {129, 257, 47}, {257, 129, 300}, {130, 131, 16}};
  std::uint64_t seed = 100;
  for (const Shape3& s : shapes)
    for (int t = 0; t < 4; ++t) {
      SCOPED_TRACE(::testing::Message() << s.m << "x" << s.n << "x" << s.k << " trans " << t);
      vk::GemmArgs args;
      args.m = s.m;
      args.n = s.n;
      args.k = s.k;
      args.trans_a = (t & 1) != 0;
      args.trans_b = (t & 2) != 0;
      check(args, std::size_t{s.m} * s.k, std::size_t{s.k} * s.n, std::size_t{s.m} * s.n, seed += 3);
    }
}

TEST_P(GemmVariantTest, StridedBatchesAlphaBetaAndASharedOperand) {
  vk::GemmArgs args;
  args.m = 131;
  args.n = 37;
  args.k = 45;
  args.batch = 3;
  args.trans_b = true;
  args.lda = 48;                  // A rows padded from 45 to 48
  args.ldc = 40;                  // C rows padded from 37 to 40
  args.stride_a = 131 * 48 + 5;   // gaps between batches
  args.stride_b = 0;              // one B for every batch
  args.stride_c = 131 * 40 + 3;
  args.alpha = -0.75f;
  args.beta = 1.5f;
  check(args, 3 * (131 * 48 + 5), 37 * 45, 3 * (131 * 40 + 3), 7);
}

// Rows padded to multiples of 4: gemm_coopmat reads both operands in runs of 4, and the
// last run of each row is partly outside the matrix (k = 45, n = 66).
TEST_P(GemmVariantTest, PaddedRowsReadInRunsOfFour) {
  for (bool half : {false, true}) {
    vk::GemmArgs args;
    args.m = 70;
    args.n = 66;
    args.k = 45;
    args.lda = 48;
    args.ldb = 68;
    check(args, 70 * 48, 45 * 68, 70 * 66, half ? 31 : 30, {.half_ab = half, .half_c = false});
  }
}

TEST_P(GemmVariantTest, Float16OperandsAndResult) {
  vk::GemmArgs args;
  args.m = 200;
  args.n = 136;
  args.k = 77;
  args.trans_a = true;
  check(args, 200 * 77, 77 * 136, 200 * 136, 9, {.half_ab = true, .half_c = false});
  check(args, 200 * 77, 77 * 136, 200 * 136, 10, {.half_ab = true, .half_c = true});
}

TEST_P(GemmVariantTest, TheEpilogueAddsTheBiasAndActivates) {
  const std::uint32_t m = 70, n = 150, k = 40;
  std::vector<float> a = random_floats(m * k, 21), b = random_floats(k * n, 22), bias = random_floats(n, 23);
  if (vk::on_matrix_units(GetParam())) {
    a = rounded_to_half(a);
    b = rounded_to_half(b);
  }
  vk::GemmArgs args;
  args.m = m;
  args.n = n;
  args.k = k;
  args.choice = vk::KernelChoice::gpu;
  args.variant = GetParam();
  vk::GemmEpilogue epilogue;
  epilogue.bias = upload(bias);
  epilogue.activation = vk::UnaryOp::relu;
  const vk::BufferSlice dc = scratch(m * n);
  vk::Recording recording(device(), {.name = "gemm variant epilogue"});
  vk::gemm(recording, args, {upload(a), upload(b), dc, vk::BufferSlice{}}, epilogue);
  recording.finish();
  recording.run();
  const std::vector<float> got = download(dc, m * n);
  std::vector<double> want(m * n, 0.0), magnitude;
  gemm_reference(args, a, b, want, magnitude);
  std::vector<double> tolerance(m * n);
  for (std::uint32_t i = 0; i < m * n; ++i) {
    want[i] = std::max(want[i] + bias[i % n], 0.0);
    tolerance[i] = (k + 3.0) * std::ldexp(1.0, -23) * (magnitude[i] + std::abs(bias[i % n])) + 1e-30;
  }
  EXPECT_EQ(compare(got, want, tolerance), "");
}

std::string variant_name(const ::testing::TestParamInfo<GemmVariant>& info) {
  return std::string(vk::to_string(info.param));
}

INSTANTIATE_TEST_SUITE_P(Gpu, GemmVariantTest,
                         ::testing::Values(GemmVariant::tiled_64, GemmVariant::tiled_128, GemmVariant::tiled_128x64,
                                           GemmVariant::cooperative_matrix, GemmVariant::cooperative_matrix_wide,
                                           GemmVariant::cooperative_matrix_64, GemmVariant::tiled_128_k16,
                                           GemmVariant::cooperative_matrix_k64, GemmVariant::cooperative_matrix_4sg),
                         variant_name);

class GemmVariantChoice : public VkTest {};

TEST_F(GemmVariantChoice, AutomaticTakesTheMatrixUnitsOnlyForFloat16Operands) {
  vk::GemmArgs args;
  args.m = args.n = args.k = 256;
  vk::BufferSlice f32 = scratch(256 * 256), f16 = scratch(256 * 128);
  f16.f16 = true;
  const bool units = offered(GemmVariant::cooperative_matrix);
  EXPECT_EQ(vk::gemm_variant_for(args, f16, f16, device()),
            units ? GemmVariant::cooperative_matrix : GemmVariant::tiled_64);
  // One float32 operand would be rounded to float16: the tiles keep float32.
  EXPECT_EQ(vk::gemm_variant_for(args, f16, f32, device()), GemmVariant::tiled_64);
  EXPECT_EQ(vk::gemm_variant_for(args, f32, f32, device()), GemmVariant::tiled_64);
  args.m = args.n = 4096;  // tiled_128 is only named, never chosen
  EXPECT_EQ(vk::gemm_variant_for(args, f32, f32, device()), GemmVariant::tiled_64);
}

TEST_F(GemmVariantChoice, AVariantTheDeviceLacksIsRefusedByName) {
  if (offered(GemmVariant::cooperative_matrix)) GTEST_SKIP() << device().label() << " has matrix units";
  vk::GemmArgs args;
  args.m = args.n = args.k = 16;
  args.variant = GemmVariant::cooperative_matrix;
  const vk::BufferSlice x = scratch(256);
  try {
    vk::gemm_variant_for(args, x, x, device());
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("cooperative_matrix"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(device().label()), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
