// Float16 storage (BufferSlice::f16, shaders/f16_storage.glsl): a kernel given float16
// operands must compute exactly what it computes in float32 from the same values, and
// round only what it stores. So each case runs twice on inputs already rounded to
// float16: once with float32 bindings (held to the double references by the other
// kernel tests) and once with some bindings float16; a float16 result must equal the
// float32 result rounded to float16 bit for bit, a float32 result must equal it
// exactly. Loading float16 as float32 (a wrong mask bit, a wrong index) or storing at
// the wrong width breaks that equality by far more than rounding.
//
// Every case runs on the device as it is and again on it opened without
// storageBuffer16BitAccess (packed_f16_device): there the kernels' packed builds hold
// two halves a 32-bit word, and must give the same bits. On a device that lacks the
// feature (SwiftShader) both runs take the packed builds.
#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "vk_test_env.h"
#include "core/error.h"
#include "core/half.h"
#include "engine/vk/kernels/batch_norm.h"
#include "engine/vk/kernels/conv.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/elementwise.h"
#include "engine/vk/kernels/elementwise_chain.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/kernels/launch.h"
#include "engine/vk/kernels/pool.h"
#include "engine/vk/kernels/reduce.h"
#include "engine/vk/kernels/training.h"
#include "shaders/embedded.h"

namespace vkp::test {
namespace {

class F16Fixture : public VkTest {
 protected:
  // A NaN-filled slice for `count` results of either width.
  vk::BufferSlice result(std::size_t count, bool half) {
    vk::BufferSlice slice = scratch(half ? (count + 1) / 2 : count);
    slice.f16 = half;
    return slice;
  }
  // Empty when `got` (stored at `half` width) is `want` (float32) stored at that width.
  static std::string same(const std::vector<float>& got, const std::vector<float>& want, bool half) {
    int bad = 0;
    std::string first;
    for (std::size_t i = 0; i < want.size(); ++i) {
      const float expect = half ? to_float(to_half(want[i])) : want[i];
      if (std::memcmp(&got[i], &expect, 4) != 0 && bad++ == 0)
        first = fmt::format("element {}: {} where {} (float32 {})", i, got[i], expect, want[i]);
    }
    return bad == 0 ? "" : fmt::format("{} of {} differ; first {}", bad, want.size(), first);
  }
  void run(const std::function<void(vk::Recording&)>& record) {
    vk::Recording recording(device(), {.name = "f16 storage test"});
    record(recording);
    recording.finish();
    recording.run();
  }
  // Records `kernel(recording, half)` twice, with float32 storage (half false) and with
  // float16 storage where `kernel` puts it, and compares the `count` results.
  void both_widths(std::size_t count, bool half_result,
                   const std::function<void(vk::Recording&, bool half, const vk::BufferSlice& out)>& kernel) {
    const vk::BufferSlice r32 = result(count, false), r16 = result(count, half_result);
    run([&](vk::Recording& r) {
      kernel(r, false, r32);
      kernel(r, true, r16);
    });
    EXPECT_EQ(same(get(r16, count), get(r32, count), half_result), "");
  }
};

enum class Halves { as_the_device_has, packed };

std::string halves_name(Halves h) { return h == Halves::packed ? "packed" : "as_the_device_has"; }

// Kernel families with a CPU and a GPU variant run both.
// Bit for bit needs one kernel for both widths: where the device has matrix units,
// float16 operands would take them (gemm_variants_test.cpp, conv_coopmat_test.cpp), so
// these run on it opened without.
class F16Storage : public F16Fixture,
                   public ::testing::WithParamInterface<std::tuple<vk::KernelChoice, Halves>> {
 protected:
  void SetUp() override {
    use_device(std::get<1>(GetParam()) == Halves::packed ? packed_f16_device() : device_without_matrix_units());
  }
  vk::KernelChoice choice() const { return std::get<0>(GetParam()); }
};
// Those with one variant.
class F16StorageKernels : public F16Fixture, public ::testing::WithParamInterface<Halves> {
 protected:
  void SetUp() override {
    if (GetParam() == Halves::packed) use_device(packed_f16_device());
  }
};

struct GemmCase {
  std::uint32_t m, n, k;
  bool trans_a, trans_b;
};

// 33 x 70 runs as C on the CPU path (B packed), 2049 x 3 as C^T (A packed); K = 64 with
// contiguous rows reads op(A) as vec4s. Instead of packing, 40 x 36 x 64 reads B in place
// by rows and 24 x 40 x 36 (as C^T) A by columns (gemm_cpu_y_mode 1 and 2).
constexpr GemmCase kGemms[] = {{33, 70, 19, false, false}, {2049, 3, 5, false, true}, {40, 36, 64, false, false},
                               {17, 29, 12, true, true}, {24, 40, 36, false, true}};

TEST_P(F16Storage, GemmOperandsAndResultInEitherWidth) {
  std::uint64_t seed = 1;
  for (const GemmCase& c : kGemms)
    for (int halves : {1, 2, 4, 7}) {  // bit 0: A, 1: B, 2: C
      const bool ha = halves & 1, hb = halves & 2, hc = halves & 4;
      SCOPED_TRACE(fmt::format("{}x{}x{} trans {}{}, float16 A {} B {} C {}", c.m, c.n, c.k, c.trans_a, c.trans_b, ha,
                               hb, hc));
      vk::GemmArgs args;
      args.m = c.m, args.n = c.n, args.k = c.k, args.trans_a = c.trans_a, args.trans_b = c.trans_b;
      args.choice = choice();
      // Bit for bit needs one kernel for both widths: automatic would take the matrix
      // units for float16 operands where the device has them (gemm_variants_test.cpp).
      args.variant = vk::GemmVariant::tiled_64;
      const std::size_t mn = std::size_t{c.m} * c.n;
      const auto a = rounded_to_half(random_floats(std::size_t{c.m} * c.k, seed++));
      const auto b = rounded_to_half(random_floats(std::size_t{c.k} * c.n, seed++));
      const auto bias = random_floats(c.n, seed++);
      const auto residual = rounded_to_half(random_floats(mn, seed++));
      const vk::BufferSlice work = arena().allocate(std::max<std::size_t>(vk::gemm_workspace_bytes(args, device()), 4), "w");
      vk::GemmEpilogue plain_epilogue, half_epilogue;
      plain_epilogue.bias = half_epilogue.bias = upload(bias);  // a variable: float32 beside float16 operands
      plain_epilogue.residual = upload(residual);
      half_epilogue.residual = put(residual, hc);
      plain_epilogue.activation = half_epilogue.activation = vk::UnaryOp::relu;
      const vk::BufferSlice c32 = result(mn, false), c16 = result(mn, hc);
      run([&](vk::Recording& r) {
        vk::gemm(r, args, {upload(a), upload(b), c32, work}, plain_epilogue);
        vk::gemm(r, args, {put(a, ha), put(b, hb), c16, work}, half_epilogue);
      });
      EXPECT_EQ(same(get(c16, mn), get(c32, mn), hc), "");
    }
}

TEST_P(F16Storage, GemmGateReadAsFloat16) {
  vk::GemmArgs args;
  args.m = 45, args.n = 38, args.k = 27, args.choice = choice();
  const std::size_t mn = 45 * 38;
  const auto a = rounded_to_half(random_floats(45 * 27, 7)), b = rounded_to_half(random_floats(27 * 38, 8));
  const auto y = rounded_to_half(random_floats(mn, 9));  // relu's output, negative ones zeroed below
  std::vector<float> gate = y;
  for (float& v : gate) v = std::max(v, 0.0f);
  const vk::BufferSlice work = arena().allocate(std::max<std::size_t>(vk::gemm_workspace_bytes(args, device()), 4), "w");
  vk::GemmEpilogue plain, half;
  plain.gate = upload(gate);
  half.gate = put(gate, true);
  plain.gate_fn = half.gate_fn = vk::BinaryOp::relu_grad;
  const vk::BufferSlice c32 = result(mn, false), c16 = result(mn, true);
  run([&](vk::Recording& r) {
    vk::gemm(r, args, {upload(a), upload(b), c32, work}, plain);
    vk::gemm(r, args, {put(a, true), put(b, true), c16, work}, half);
  });
  EXPECT_EQ(same(get(c16, mn), get(c32, mn), true), "");
}

struct ConvCase {
  vk::ConvPush g;
  std::uint32_t cout;
};

// Channels in runs of 4 (vec4 loads) with padding; odd channels, stride 2, dilation 2,
// no vec4 (no input gradient: it needs stride 1, or dy's channels in runs of 4); on a
// CPU device with texel buffers, where conv_regblock reads the image in place: 3
// channels (kScalar), and a strided input gradient (phase by phase).
const ConvCase kConvs[] = {
    {{2, 9, 7, 8, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 12},
    {{3, 10, 9, 5, 3, 4, 3, 2, 2, 2, 2, 1, 0, 0, 1}, 6},
    {{2, 8, 6, 3, 8, 6, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 8},
    {{2, 9, 7, 8, 5, 4, 3, 3, 2, 2, 1, 1, 1, 1, 1}, 8},
};

TEST_P(F16Storage, ConvolutionProductsReadAndWriteFloat16) {
  std::uint64_t seed = 100;
  for (const ConvCase& c : kConvs) {
    const vk::ConvPush& g = c.g;
    const std::size_t x_size = std::size_t{g.n} * g.h * g.w * g.c, dy_size = std::size_t{g.n} * g.oh * g.ow * c.cout;
    const std::size_t w_size = std::size_t{g.kh} * g.kw * (g.c / g.groups) * c.cout;
    const auto x = rounded_to_half(random_floats(x_size, seed++)), dy = rounded_to_half(random_floats(dy_size, seed++));
    const auto w = random_floats(w_size, seed++);  // a variable: float32
    for (vk::ConvProduct product :
         {vk::ConvProduct::forward, vk::ConvProduct::filter_gradient, vk::ConvProduct::input_gradient}) {
      if (!vk::implicit_conv_supports(g, product) &&
          !(choice() == vk::KernelChoice::cpu && vk::implicit_conv_supports(g, c.cout, product, device())))
        continue;
      SCOPED_TRACE(fmt::format("{}x{} channels {} -> {}, stride {}, product {}", g.h, g.w, g.c, c.cout, g.stride_h,
                               static_cast<int>(product)));
      const bool filter = product == vk::ConvProduct::filter_gradient;
      const bool input_gradient = product == vk::ConvProduct::input_gradient;
      const std::vector<float>& image = input_gradient ? dy : x;
      const std::size_t count = product == vk::ConvProduct::forward ? dy_size : input_gradient ? x_size : w_size;
      const bool half_result = !filter;  // a filter gradient feeds an optimizer: float32
      const vk::BufferSlice work = arena().allocate(
          std::max<std::uint64_t>(vk::implicit_conv_workspace_bytes(g, c.cout, product, device(), choice()), 4), "w");
      const vk::BufferSlice r32 = result(count, false), r16 = result(count, half_result);
      run([&](vk::Recording& r) {
        vk::implicit_conv(r, {g, c.cout, product}, {upload(image), upload(filter ? dy : w), r32, work}, choice());
        vk::implicit_conv(r, {g, c.cout, product}, {put(image, true), filter ? put(dy, true) : upload(w), r16, work},
                          choice());
      });
      EXPECT_EQ(same(get(r16, count), get(r32, count), half_result), "");
    }
  }
}

TEST_P(F16StorageKernels, BatchNormStatisticsApplyAndGradients) {
  for (const std::uint32_t c : {12u, 5u}) {  // vec4 lanes, and one channel at a time
    SCOPED_TRACE(fmt::format("{} channels", c));
    const std::uint64_t m = 2 * 9 * 7;
    const std::size_t n = m * c;
    const auto x = rounded_to_half(random_floats(n, 300 + c, -2.0f, 3.0f));
    const auto dy = rounded_to_half(random_floats(n, 301 + c));
    const vk::BufferSlice gamma = upload(random_floats(c, 302 + c, 0.5f, 1.5f)), beta = upload(random_floats(c, 303 + c));
    const vk::BufferSlice work = arena().allocate(vk::batch_norm_workspace_bytes(m, c), "w");
    const vk::BufferSlice stats = result(2 * c, false);
    run([&](vk::Recording& r) { vk::batch_norm_stats(r, {.m = m, .c = c, .x = upload(x), .stats = stats}, work); });
    both_widths(2 * c, false, [&](vk::Recording& r, bool half, const vk::BufferSlice& out) {
      vk::batch_norm_stats(r, {.m = m, .c = c, .x = put(x, half), .stats = out}, work);
    });
    // x and dy in the given width; the statistics, gamma, beta and sums float32.
    const auto args = [&](bool half, const vk::BufferSlice& sums) {
      return vk::BatchNormArgs{.m = m,
                               .c = c,
                               .eps = 1e-3f,
                               .x = put(x, half),
                               .stats = stats,
                               .gamma = gamma,
                               .beta = beta,
                               .dy = put(dy, half),
                               .sums = sums,
                               .relu = true};
    };
    both_widths(2 * c, false, [&](vk::Recording& r, bool half, const vk::BufferSlice& out) {
      vk::batch_norm_grad_sums(r, args(half, out), work);
    });
    const vk::BufferSlice sums = result(2 * c, false);
    run([&](vk::Recording& r) {
      vk::batch_norm_grad_sums(
          r, {.m = m, .c = c, .eps = 1e-3f, .x = upload(x), .stats = stats, .dy = upload(dy), .sums = sums}, work);
    });
    for (const vk::BatchNormMode mode : {vk::BatchNormMode::forward, vk::BatchNormMode::grad_batch_statistics})
      both_widths(n, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& out) {
        vk::batch_norm_apply(r, mode, args(half, sums), out);
      });
  }
}

TEST_P(F16StorageKernels, PoolingAndItsGradient) {
  for (const std::uint32_t c : {8u, 3u})
    for (const vk::PoolMode mode : {vk::PoolMode::max, vk::PoolMode::avg}) {
      SCOPED_TRACE(fmt::format("{} channels, mode {}", c, static_cast<int>(mode)));
      const vk::PoolPush g{2, 9, 7, c, 4, 3, 2, 2, 2, 2, 0, 0};
      const std::size_t in = std::size_t{2} * 9 * 7 * c, out = std::size_t{2} * 4 * 3 * c;
      const auto x = rounded_to_half(random_floats(in, 400 + c)), dy = rounded_to_half(random_floats(out, 401 + c));
      both_widths(out, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
        vk::pool(r, mode, g, put(x, half), y);
      });
      both_widths(in, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& dx) {
        vk::pool_grad(r, mode, g, put(x, half), put(dy, half), dx);
      });
    }
}

TEST_P(F16StorageKernels, Im2colAndCol2im) {
  const vk::ConvPush g{2, 9, 7, 8, 4, 3, 3, 3, 2, 2, 1, 1, 0, 0, 1};
  const std::size_t in = std::size_t{2} * 9 * 7 * 8, cols = std::size_t{2} * 4 * 3 * 3 * 3 * 8;
  const auto x = rounded_to_half(random_floats(in, 500)), col = rounded_to_half(random_floats(cols, 501));
  both_widths(cols, false, [&](vk::Recording& r, bool half, const vk::BufferSlice& out) {
    vk::im2col(r, g, put(x, half), out);
  });
  both_widths(in, true, [&](vk::Recording& r, bool, const vk::BufferSlice& dx) { vk::col2im(r, g, upload(col), dx); });
}

// Strided copies (slice, pad, concat, transpose, broadcast) in each pairing of widths,
// and fill (pad's zeros): a float16 destination holds the float32 result rounded.
TEST_P(F16StorageKernels, StridedCopiesAndFills) {
  const auto x = rounded_to_half(random_floats(5 * 7 * 6, 700));
  // A transpose of [5, 7, 6] to [6, 5, 7], written into the middle of a padded buffer.
  const vk::StridedCopy args{{6, 5, 7}, {1, 42, 6}, 0, 9, {}};
  const std::size_t count = 9 + 5 * 7 * 6;
  for (const bool half_source : {false, true})
    both_widths(count, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& out) {
      vk::fill(r, out, count, 0.375f);
      vk::copy(r, args, put(x, half && half_source), out);
    });
  // Odd counts fill whole words: the last value is there too.
  both_widths(13, true, [&](vk::Recording& r, bool, const vk::BufferSlice& out) { vk::fill(r, out, 13, -2.5f); });
}

TEST_P(F16Storage, ElementwiseOpsChainsDropoutAndReductions) {
  const std::size_t n = 1003;  // vec4 runs and a tail
  const auto a = rounded_to_half(random_floats(n, 600)), b = rounded_to_half(random_floats(n, 601));
  both_widths(n, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    vk::unary(r, vk::UnaryOp::tanh, n, put(a, half), y);
  });
  both_widths(n, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    vk::binary(r, vk::BinaryOp::mul, {Shape{1003}, put(a, half)}, {Shape{1003}, put(b, half)}, y);
  });
  both_widths(n, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    vk::binary_scalar(r, vk::BinaryOp::sub, n, put(a, half), {.value = 0.25f, .first = true}, y);
  });
  // Broadcasting: [17, 1, 5] - [3, 5].
  const auto big = rounded_to_half(random_floats(17 * 5, 602)), small = rounded_to_half(random_floats(15, 603));
  both_widths(17 * 3 * 5, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    vk::binary(r, vk::BinaryOp::sub, {Shape{17, 1, 5}, put(big, half)}, {Shape{3, 5}, put(small, half)}, y);
  });
  // tanh(a * b + bias[channel]) with a float32 bias.
  const std::uint32_t channels = 17;
  const auto bias = random_floats(channels, 604);
  const vk::ChainStep steps[] = {vk::binary_step(vk::BinaryOp::mul, vk::chain_input(0), vk::chain_input(1)),
                                 vk::binary_step(vk::BinaryOp::add, vk::chain_result(0), vk::chain_input(2)),
                                 vk::unary_step(vk::UnaryOp::tanh, vk::chain_result(1))};
  const vk::ChainInput modes[] = {vk::ChainInput::full, vk::ChainInput::full, vk::ChainInput::channel};
  const std::size_t rows = 59;
  const auto ca = rounded_to_half(random_floats(rows * channels, 605)), cb = rounded_to_half(random_floats(rows * channels, 606));
  both_widths(rows * channels, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    const vk::BufferSlice inputs[] = {put(ca, half), put(cb, half), upload(bias)};
    vk::elementwise_chain(r, steps, inputs, modes, {rows * channels, channels}, y);
  });
  const vk::BufferSlice scalars = upload(std::vector<float>(8, 0.0f));
  both_widths(n, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
    vk::dropout(r, n, {0.3f, 7, 1234}, put(a, half), scalars, y);
  });
  // Sums over an axis of 300 (two passes through float32 partial sums) and of 7.
  const auto x = rounded_to_half(random_floats(13 * 300 * 3, 607));
  for (vk::ReduceArgs args : {vk::ReduceArgs{vk::ReduceOp::sum, 13, 300, 3}, vk::ReduceArgs{vk::ReduceOp::max, 13 * 300 / 7 * 3, 7, 1}}) {
    args.choice = choice();
    const vk::BufferSlice work = arena().allocate(std::max<std::size_t>(vk::reduce_workspace_bytes(args, device()), 4), "w");
    both_widths(std::size_t{args.outer} * args.inner, true, [&](vk::Recording& r, bool half, const vk::BufferSlice& y) {
      vk::reduce(r, args, put(x, half), y, work);
    });
  }
}

INSTANTIATE_TEST_SUITE_P(Both, F16Storage,
                         ::testing::Combine(::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                                            ::testing::Values(Halves::as_the_device_has, Halves::packed)),
                         [](const auto& p) {
                           return (std::get<0>(p.param) == vk::KernelChoice::cpu ? "cpu_" : "gpu_") +
                                  halves_name(std::get<1>(p.param));
                         });
INSTANTIATE_TEST_SUITE_P(Both, F16StorageKernels, ::testing::Values(Halves::as_the_device_has, Halves::packed),
                         [](const auto& p) { return halves_name(p.param); });

class F16StorageErrors : public VkTest {};

TEST_F(F16StorageErrors, AKernelWithoutAFloat16BuildRefusesAFloat16Operand) {
  vk::BufferSlice x = scratch(64);
  x.f16 = true;
  const vk::BufferSlice y = scratch(64);
  vk::Recording recording(device());
  try {
    vk::GemmArgs args;
    args.m = 4, args.n = 4, args.k = 4;
    args.lda = 5, args.ldb = 5;  // rows that are not vec4s: the operand is packed
    args.choice = vk::KernelChoice::cpu;  // the packing path on any device (GPUs tile instead)
    // gemm_pack reads its source as float16, but writes panels of float32 only.
    vk::BufferSlice bad_workspace = scratch(4096);
    bad_workspace.f16 = true;
    vk::gemm(recording, args, {y, x, y, bad_workspace});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("binding 1 holds float16 values"), std::string::npos) << e.what();
  }
}

// Without storageBuffer16BitAccess a float16 binding takes the family's packed build
// (the 16-bit one would need the feature: the validation layer would report it); a
// float16 build without a packed sibling is refused, naming the kernel and the feature.
TEST_F(F16StorageErrors, WithoutSixteenBitStorageThePackedBuildRunsOrTheKernelIsRefused) {
  vk::Device& packed = packed_f16_device();
  EXPECT_FALSE(packed.features().f16_storage);
  vk::Arena arena(packed, vk::MemoryUse::device, "no f16", 1 << 16);
  vk::BufferSlice x = arena.allocate(4096, "x");
  const vk::BufferSlice y = arena.allocate(4096, "y");
  x.f16 = true;
  const vk::BufferSlice bindings[] = {x, y};
  const vk::Kernel& kernel = vk::storage_kernel(packed, shaders::unary, shaders::unary_f16, bindings, {});
  EXPECT_EQ(kernel.name().rfind("unary_f16p", 0), 0u) << kernel.name();
  EXPECT_EQ(kernel.f16_bindings(), 0b01u);
  if (device().features().f16_storage) {
    const vk::Kernel& native = vk::storage_kernel(device(), shaders::unary, shaders::unary_f16, bindings, {});
    EXPECT_EQ(native.name().rfind("unary_f16{", 0), 0u) << native.name();
  }
  try {
    vk::storage_kernel(packed, shaders::unary, shaders::unary_f16p, bindings, {});  // f16p has no sibling
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("storageBuffer16BitAccess"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("no packed float16 build"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
