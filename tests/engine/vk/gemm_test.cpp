// GEMM against a double-precision CPU reference at sizes that are not multiples of any
// tile, both kernel variants (the CPU path and the GPU path run on any device).
//
// Tolerance, per element: |c - ref| <= lambda sqrt(k + 2) u (sum_p |alpha a_ip b_pj| + |beta c|),
// u = 2^-24, lambda = 8: the probabilistic bound of Higham and Mary (SIAM J. Sci. Comput.
// 41(5), 2019) for an inner product of k terms in any order, plus the scaling by alpha and
// the addition of beta c; it fails to hold with probability at most 2 (k + 2) exp(-32)
// over the rounding errors. (The worst-case bound, (k + 2) u, is 45 times looser at
// k = 2049: it would let a dropped term through.) GemmChecker proves that the checker
// rejects zeros, an element beyond its tolerance and a transposed C.
#include "engine/vk/kernels/gemm.h"

#include <gtest/gtest.h>

#include <cmath>

#include "checker.h"
#include "core/error.h"
#include "reference.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

struct GemmCase {
  std::uint32_t m, n, k;
  bool trans_a, trans_b;
  vk::KernelChoice choice;
};

std::string case_name(const GemmCase& c) {
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + (c.trans_a ? "_At" : "") +
         (c.trans_b ? "_Bt" : "") + (c.choice == vk::KernelChoice::cpu ? "_cpu" : "_gpu");
}

std::string param_name(const ::testing::TestParamInfo<GemmCase>& info) { return case_name(info.param); }

// The derivation is at the top of the file.
double gemm_tolerance(std::uint32_t k, double magnitude) {
  return 8.0 * std::sqrt(k + 2.0) * std::ldexp(1.0, -24) * magnitude + 1e-30;
}

class GemmTest : public VkTest {
 protected:
  // Runs gemm on random data (C starts random too when beta != 0) and checks every
  // element against the reference.
  void check(const vk::GemmArgs& args, std::size_t a_count, std::size_t b_count, std::size_t c_count,
             std::uint64_t seed) {
    const std::vector<float> a = random_floats(a_count, seed), b = random_floats(b_count, seed + 1);
    // With beta == 0, C starts as NaN: the kernel must not read it.
    const std::vector<float> c0 =
        args.beta != 0 ? random_floats(c_count, seed + 2) : std::vector<float>(c_count, std::nanf(""));
    const vk::BufferSlice da = upload(a), db = upload(b), dc = upload(c0);
    const vk::BufferSlice work =
        arena().allocate(std::max<std::size_t>(vk::gemm_workspace_bytes(args, device()), 4), "work");
    vk::Recording recording(device(), {.name = "gemm test"});
    vk::gemm(recording, args, {da, db, dc, work});
    recording.finish();
    recording.run();
    const std::vector<float> got = download(dc, c_count);
    std::vector<double> want(c0.begin(), c0.end()), magnitude;
    gemm_reference(args, a, b, want, magnitude);
    // Elements outside the result (padding, gaps) must be left as they were.
    EXPECT_EQ(compare_gemm(got, c0, want, magnitude, [&](double m, double) { return gemm_tolerance(args.k, m); }), "");
  }
};

vk::GemmArgs args_of(const GemmCase& p) {
  vk::GemmArgs args;
  args.m = p.m;
  args.n = p.n;
  args.k = p.k;
  args.trans_a = p.trans_a;
  args.trans_b = p.trans_b;
  args.choice = p.choice;
  return args;
}

// One test a kernel variant and pair of transposes, each over every awkward shape (a
// process each would spend more on starting than on the GEMMs: 120 of them a leg).
struct GemmForm {
  bool trans_a, trans_b;
  vk::KernelChoice choice;
};

class GemmShapes : public GemmTest, public ::testing::WithParamInterface<GemmForm> {};

TEST_P(GemmShapes, MatchesReference) {
  const std::uint32_t shapes[][3] = {{1, 1, 1},
                                     {7, 7, 7},
                                     {63, 65, 7},
                                     {65, 63, 257},
                                     {257, 65, 63},
                                     {1, 1031, 65},
                                     {1031, 1, 65},
                                     {7, 65, 1031},
                                     {2049, 3, 5},
                                     {3, 2049, 17},
                                     {5, 3, 2049},
                                     {257, 257, 257},
                                     // Row strides that are multiples of 4: packing reads vec4s.
                                     {36, 68, 46},
                                     {1028, 12, 72},
                                     {44, 1028, 40}};
  const GemmForm& f = GetParam();
  for (const auto& [m, n, k] : shapes) {
    const GemmCase c{m, n, k, f.trans_a, f.trans_b, f.choice};
    SCOPED_TRACE(case_name(c));
    check(args_of(c), std::size_t{m} * k, std::size_t{k} * n, std::size_t{m} * n, m * 131 + n * 7 + k);
  }
}

std::vector<GemmForm> gemm_forms() {
  std::vector<GemmForm> forms;
  for (int t = 0; t < 4; ++t)
    for (vk::KernelChoice choice : {vk::KernelChoice::cpu, vk::KernelChoice::gpu})
      forms.push_back({(t & 1) != 0, (t & 2) != 0, choice});
  return forms;
}

INSTANTIATE_TEST_SUITE_P(Awkward, GemmShapes, ::testing::ValuesIn(gemm_forms()),
                         [](const ::testing::TestParamInfo<GemmForm>& p) {
                           const GemmForm& f = p.param;
                           return std::string(f.trans_a ? "At_" : "A_") + (f.trans_b ? "Bt_" : "B_") +
                                  (f.choice == vk::KernelChoice::cpu ? "cpu" : "gpu");
                         });

class GemmVariants : public GemmTest, public ::testing::WithParamInterface<vk::KernelChoice> {};

TEST_P(GemmVariants, AlphaAndBetaScaleAndAccumulate) {
  vk::GemmArgs args;
  args.m = 33;
  args.n = 70;
  args.k = 19;
  args.alpha = -0.75f;
  args.beta = 1.5f;
  args.choice = GetParam();
  check(args, 33 * 19, 19 * 70, 33 * 70, 11);
}

TEST_P(GemmVariants, StridedBatchesWithPaddedRowsAndASharedOperand) {
  vk::GemmArgs args;
  args.m = 9;
  args.n = 13;
  args.k = 6;
  args.batch = 5;
  args.trans_b = true;
  args.lda = 8;               // A rows padded from 6 to 8
  args.ldc = 15;              // C rows padded from 13 to 15
  args.stride_a = 9 * 8 + 3;  // gaps between batches
  args.stride_b = 0;          // one B for every batch
  args.stride_c = 9 * 15 + 1;
  args.choice = GetParam();
  check(args, 5 * (9 * 8 + 3), 13 * 6, 5 * (9 * 15 + 1), 12);
}

// The CPU path runs this narrow product as C^T = B^T A^T: A, shared, is the packed operand.
TEST_P(GemmVariants, NarrowStridedBatchesWithASharedOperand) {
  vk::GemmArgs args;
  args.m = 70;
  args.n = 3;
  args.k = 6;
  args.batch = 5;
  args.trans_a = true;
  args.lda = 72;              // A (k x m) rows padded from 70 to 72
  args.ldc = 5;               // C rows padded from 3 to 5
  args.stride_a = 0;          // one A for every batch
  args.stride_b = 6 * 3 + 2;  // gaps between batches
  args.stride_c = 70 * 5 + 1;
  args.choice = GetParam();
  EXPECT_TRUE(vk::gemm_cpu_transposes(args));
  check(args, 6 * 72, 5 * (6 * 3 + 2), 5 * (70 * 5 + 1), 15);
}

TEST(GemmPlan, TheCpuPathTransposesNarrowProductsOnly) {
  vk::GemmArgs args;
  args.m = 100352;  // a ResNet convolution: pixels x 16 channels, 3x3x16 taps
  args.n = 16;
  args.k = 144;
  EXPECT_TRUE(vk::gemm_cpu_transposes(args));
  std::swap(args.m, args.n);
  EXPECT_FALSE(vk::gemm_cpu_transposes(args));
  args.m = args.n = args.k = 1024;
  EXPECT_FALSE(vk::gemm_cpu_transposes(args));
}

TEST_P(GemmVariants, BatchedTransposedOperands) {
  vk::GemmArgs args;
  args.m = 17;
  args.n = 5;
  args.k = 66;
  args.batch = 3;
  args.trans_a = true;
  args.trans_b = true;
  args.choice = GetParam();
  check(args, 3 * 17 * 66, 3 * 66 * 5, 3 * 17 * 5, 13);
}

TEST_P(GemmVariants, EmptyKGivesBetaTimesC) {
  vk::GemmArgs args;
  args.m = 4;
  args.n = 5;
  args.k = 0;
  args.beta = 0.5f;
  args.choice = GetParam();
  check(args, 0, 0, 20, 14);
}

INSTANTIATE_TEST_SUITE_P(Both, GemmVariants, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

// Narrow products with a long K: the CPU path splits K into parts multiplied as a batch
// and reduces their partial sums. Each shape must take that path (gemm_cpu_splits), in
// either orientation, with K's parts not multiples of 4.
class GemmSplitK : public GemmTest, public ::testing::WithParamInterface<GemmCase> {};

TEST_P(GemmSplitK, MatchesReference) {
  const GemmCase& p = GetParam();
  vk::GemmArgs args = args_of(p);
  args.alpha = -1.25f;
  EXPECT_GT(vk::gemm_cpu_splits(args, device()), 1u);
  check(args, std::size_t{p.m} * p.k, std::size_t{p.k} * p.n, std::size_t{p.m} * p.n, p.m * 17 + p.n + p.k);
}

std::vector<GemmCase> split_k_cases() {
  // 144 x 16 x 6006: a ResNet filter gradient's shape at a shorter K; 33 x 9 x 15015 and
  // 9 x 33 x 15015: odd and narrow both ways. Neither K has 4 as a factor, so no part's
  // K is a multiple of 4 (gemm_regblock's last, partial group of k).
  const std::uint32_t shapes[][3] = {{144, 16, 6006}, {33, 9, 15015}, {9, 33, 15015}};
  std::vector<GemmCase> cases;
  for (const auto& s : shapes)
    for (int t = 0; t < 4; ++t) cases.push_back({s[0], s[1], s[2], (t & 1) != 0, (t & 2) != 0, vk::KernelChoice::cpu});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(NarrowLongK, GemmSplitK, ::testing::ValuesIn(split_k_cases()), param_name);

// Where the partial sums cannot simply be added into C the product runs whole: beta != 0,
// C's rows padded, several batches, a K without a divisor near the wanted split (a prime),
// or a product too small to be worth the reduction's dispatch.
TEST_F(GemmTest, SplitKOnlyWherePartialSumsAddIntoC) {
  vk::GemmArgs args;
  args.m = 33;
  args.n = 9;
  args.k = 15015;
  args.choice = vk::KernelChoice::cpu;
  ASSERT_GT(vk::gemm_cpu_splits(args, device()), 1u);
  args.beta = 0.5f;
  EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
  check(args, 33 * 15015, 15015 * 9, 33 * 9, 21);
  args.beta = 0.0f;
  args.ldc = 10;
  EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
  check(args, 33 * 15015, 15015 * 9, 33 * 10, 22);
  args.ldc.reset();
  args.batch = 2;
  EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
  args.batch = 1;
  args.k = 15013;  // prime
  EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
  args.k = 1001;
  EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
}

// The CPU path reads the operand it would pack in place when its rows (y_mode 1) or
// columns (y_mode 2) are aligned vec4s. Each case must take the orientation and mode it
// names, with K not a multiple of 4 where the strides allow it (the last group of k is
// read element by element), columns past N in the last panel (read clamped, not stored),
// gaps between batches, a shared operand and split-K parts; the others must pack.
struct InPlaceCase {
  const char* what;
  std::uint32_t m = 0, n = 0, k = 0;
  bool trans_a = false, trans_b = false;
  std::uint32_t lda = 0, ldb = 0, batch = 1, stride_a = 0, stride_b = 0;  // 0: the default
  bool transposed = false;                                                // computed as C^T = B^T A^T
  std::uint32_t mode = 0;                                                 // 0: packed
  std::uint32_t splits = 1;
};

// Elements of `batch` matrices of rows x cols, row stride ld, batch stride `stride`.
std::size_t elements(std::uint32_t rows, std::uint32_t cols, std::uint32_t ld, std::uint32_t batch,
                     std::uint32_t stride) {
  return std::size_t{batch - 1} * stride + std::size_t{rows - 1} * ld + cols;
}

TEST_F(GemmTest, TheCpuPathReadsAlignedOperandsInPlace) {
  const InPlaceCase cases[] = {
      {.what = "B's rows", .m = 37, .n = 44, .k = 23, .mode = 1},
      // Here and below A's rows are vec4-aligned, as B's (X in C^T) are: X does not decide.
      {.what = "B's columns", .m = 37, .n = 45, .k = 23, .trans_b = true, .lda = 24, .ldb = 24, .mode = 2},
      {.what = "A's rows, as C^T", .m = 300, .n = 5, .k = 37, .trans_a = true, .transposed = true, .mode = 1},
      {.what = "A's columns, as C^T", .m = 301, .n = 5, .k = 37, .lda = 40, .transposed = true, .mode = 2},
      {.what = "B's rows, batches with gaps",
       .m = 19,
       .n = 64,
       .k = 30,
       .batch = 3,
       .stride_b = 64 * 30 + 4,
       .mode = 1},
      {.what = "B's columns, shared by the batches",
       .m = 19,
       .n = 64,
       .k = 30,
       .trans_b = true,
       .lda = 32,
       .ldb = 32,
       .batch = 3,
       .mode = 2},
      {.what = "A's rows, split K",
       .m = 144,
       .n = 16,
       .k = 6006,
       .trans_a = true,
       .transposed = true,
       .mode = 1,
       .splits = 0},
      {.what = "A's columns, split K in parts of 4 n",
       .m = 144,
       .n = 16,
       .k = 8192,
       .transposed = true,
       .mode = 2,
       .splits = 0},
      // B's rows 65 apart must be packed; C^T would read A's columns in place, but its X
      // (B^T, rows 65 apart along k) four fetches a vec4: packing B costs less.
      {.what = "packing B rather than reading B^T by scalars", .m = 64, .n = 64, .k = 300, .ldb = 65},
      {.what = "packed: split K in parts of odd length",
       .m = 144,
       .n = 16,
       .k = 6006,
       .lda = 6008,
       .transposed = true,
       .splits = 0},
      {.what = "packed: N = 70 along B's rows", .m = 33, .n = 70, .k = 19},
      {.what = "packed: B's columns 23 apart", .m = 37, .n = 45, .k = 23, .trans_b = true},
  };
  std::uint64_t seed = 40;
  for (const InPlaceCase& c : cases) {
    SCOPED_TRACE(c.what);
    vk::GemmArgs args;
    args.m = c.m, args.n = c.n, args.k = c.k, args.trans_a = c.trans_a, args.trans_b = c.trans_b;
    args.batch = c.batch;
    args.alpha = 0.5f;
    const std::uint32_t a_rows = c.trans_a ? c.k : c.m, a_cols = c.trans_a ? c.m : c.k;
    const std::uint32_t b_rows = c.trans_b ? c.n : c.k, b_cols = c.trans_b ? c.k : c.n;
    const std::uint32_t lda = c.lda ? c.lda : a_cols, ldb = c.ldb ? c.ldb : b_cols;
    args.lda = lda, args.ldb = ldb;
    const std::uint32_t stride_a = c.stride_a ? c.stride_a : a_rows * lda;
    if (c.batch > 1) args.stride_a = stride_a, args.stride_b = c.stride_b;
    args.choice = vk::KernelChoice::cpu;
    ASSERT_EQ(vk::gemm_cpu_transposes(args), c.transposed);
    ASSERT_EQ(vk::gemm_cpu_y_mode(args, device()), c.mode);
    if (c.splits == 1)
      EXPECT_EQ(vk::gemm_cpu_splits(args, device()), 1u);
    else
      EXPECT_GT(vk::gemm_cpu_splits(args, device()), 1u);
    // Read in place on a device whose bound slices start 16-byte aligned, an unsplit
    // product needs no workspace (check() runs it with a 4-byte one).
    if (device().limits().min_storage_buffer_offset_alignment % 16 == 0) {
      EXPECT_EQ(vk::gemm_workspace_bytes(args, device()) == 0, c.mode != 0 && c.splits == 1);
    }
    check(args, elements(a_rows, a_cols, lda, c.batch, stride_a),
          elements(b_rows, b_cols, ldb, c.batch, c.batch > 1 ? c.stride_b : 0), std::size_t{c.batch} * c.m * c.n,
          seed++);
  }
}

TEST(GemmChecker, RejectsZerosAnElementBeyondItsToleranceAndATransposedResult) {
  vk::GemmArgs args;
  args.m = 9;
  args.n = 14;
  args.k = 300;
  const std::vector<float> a = random_floats(9 * 300, 1), b = random_floats(300 * 14, 2);
  std::vector<double> want(9 * 14, 0.0), magnitude;
  gemm_reference(args, a, b, want, magnitude);
  std::vector<double> tolerance;
  for (double m : magnitude) tolerance.push_back(gemm_tolerance(args.k, m));
  expect_checker_rejects(want, tolerance, 9, 14, "gemm 9x14x300");

  // One product term of the largest element dropped: the error a wrong loop bound makes.
  std::size_t largest = 0;
  for (std::size_t i = 0; i < want.size(); ++i)
    if (std::abs(want[i]) > std::abs(want[largest])) largest = i;
  std::vector<float> dropped(want.begin(), want.end());
  const std::size_t row = largest / 14, col = largest % 14;
  std::size_t p = 0;  // the term of largest magnitude
  for (std::size_t q = 0; q < 300; ++q)
    if (std::abs(a[row * 300 + q] * b[q * 14 + col]) > std::abs(a[row * 300 + p] * b[p * 14 + col])) p = q;
  dropped[largest] -= a[row * 300 + p] * b[p * 14 + col];
  EXPECT_NE(compare(dropped, want, tolerance), "") << "a result missing one product term passes";
}

TEST_F(GemmTest, TooSmallOperandIsAnErrorNamingIt) {
  vk::GemmArgs args;
  args.m = 4;
  args.n = 4;
  args.k = 4;
  const vk::BufferSlice a = scratch(16), b = scratch(15), c = scratch(16), work = scratch(4096);
  vk::Recording recording(device());
  try {
    vk::gemm(recording, args, {a, b, c, work});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("gemm: B holds 15"), std::string::npos) << e.what();
  }
}

TEST_F(GemmTest, ShortRowStrideAndSmallWorkspaceAreErrors) {
  vk::GemmArgs args;
  args.m = 4;
  args.n = 5;  // rows of 5: the CPU path packs B (or A^T) and needs room for it
  args.k = 4;
  args.lda = 3;
  const vk::BufferSlice s = scratch(64);
  vk::Recording recording(device());
  EXPECT_THROW(vk::gemm(recording, args, {s, s, s, s}), Error);
  args.lda.reset();
  args.choice = vk::KernelChoice::cpu;
  ASSERT_GT(vk::gemm_workspace_bytes(args, device()), 4u);
  EXPECT_THROW(vk::gemm(recording, args, {s, s, s, s.sub(0, 4)}), Error);
}

}  // namespace
}  // namespace vkp::test
