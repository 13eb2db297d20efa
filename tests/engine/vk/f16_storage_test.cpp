// Float16 storage (BufferSlice::f16, shaders/f16_storage.glsl): a kernel given float16
// operands must compute exactly what it computes in float32 from the same values, and
// round only what it stores. So each case runs twice on inputs already rounded to
// float16: once with float32 bindings (held to the double references by the other
// kernel tests) and once with some bindings float16; a float16 result must equal the
// float32 result rounded to float16 bit for bit, a float32 result must equal it
// exactly. Loading float16 as float32 (a wrong mask bit, a wrong index) or storing at
// the wrong width breaks that equality by far more than rounding.
#include <gtest/gtest.h>

#include <cstring>

#include <fmt/format.h>

#include "vk_test_env.h"
#include "vkpack/core/error.h"
#include "vkpack/core/half.h"
#include "vkpack/engine/vk/kernels/gemm.h"
#include "vkpack/engine/vk/kernels/implicit_conv.h"

namespace vkp::test {
namespace {

std::vector<float> rounded_to_half(std::vector<float> v) {
  for (float& x : v) x = to_float(to_half(x));
  return v;
}

class F16Storage : public VkTest, public ::testing::WithParamInterface<vk::KernelChoice> {
 protected:
  // `values` (already float16 numbers) stored as float16 when `half`, else as float32.
  vk::BufferSlice put(const std::vector<float>& values, bool half) {
    if (!half) return upload(values);
    std::vector<std::uint16_t> bits(values.size() + values.size() % 2, 0);
    for (std::size_t i = 0; i < values.size(); ++i) bits[i] = to_half(values[i]).bits;
    std::vector<float> words(bits.size() / 2);
    std::memcpy(words.data(), bits.data(), words.size() * 4);
    vk::BufferSlice slice = upload(words);
    slice.f16 = true;
    return slice;
  }
  // A NaN-filled slice for `count` results of either width.
  vk::BufferSlice result(std::size_t count, bool half) {
    vk::BufferSlice slice = scratch(half ? (count + 1) / 2 : count);
    slice.f16 = half;
    return slice;
  }
  std::vector<float> get(const vk::BufferSlice& slice, std::size_t count) {
    if (!slice.f16) return download(slice, count);
    const std::vector<float> words = download(slice, (count + 1) / 2);
    std::vector<std::uint16_t> bits(words.size() * 2);
    std::memcpy(bits.data(), words.data(), words.size() * 4);
    std::vector<float> values(count);
    for (std::size_t i = 0; i < count; ++i) values[i] = to_float(Half{bits[i]});
    return values;
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
};

struct GemmCase {
  std::uint32_t m, n, k;
  bool trans_a, trans_b;
};

// 33 x 70 runs as C on the CPU path (B packed), 2049 x 3 as C^T (A packed); K = 64 with
// contiguous rows reads op(A) as vec4s.
constexpr GemmCase kGemms[] = {{33, 70, 19, false, false}, {2049, 3, 5, false, true}, {40, 36, 64, false, false},
                               {17, 29, 12, true, true}};

TEST_P(F16Storage, GemmOperandsAndResultInEitherWidth) {
  std::uint64_t seed = 1;
  for (const GemmCase& c : kGemms)
    for (int halves : {1, 2, 4, 7}) {  // bit 0: A, 1: B, 2: C
      const bool ha = halves & 1, hb = halves & 2, hc = halves & 4;
      SCOPED_TRACE(fmt::format("{}x{}x{} trans {}{}, float16 A {} B {} C {}", c.m, c.n, c.k, c.trans_a, c.trans_b, ha,
                               hb, hc));
      vk::GemmArgs args;
      args.m = c.m, args.n = c.n, args.k = c.k, args.trans_a = c.trans_a, args.trans_b = c.trans_b;
      args.choice = GetParam();
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
        vk::gemm(r, args, upload(a), upload(b), c32, work, plain_epilogue);
        vk::gemm(r, args, put(a, ha), put(b, hb), c16, work, half_epilogue);
      });
      EXPECT_EQ(same(get(c16, mn), get(c32, mn), hc), "");
    }
}

TEST_P(F16Storage, GemmGateReadAsFloat16) {
  vk::GemmArgs args;
  args.m = 45, args.n = 38, args.k = 27, args.choice = GetParam();
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
    vk::gemm(r, args, upload(a), upload(b), c32, work, plain);
    vk::gemm(r, args, put(a, true), put(b, true), c16, work, half);
  });
  EXPECT_EQ(same(get(c16, mn), get(c32, mn), true), "");
}

struct ConvCase {
  vk::ConvPush g;
  std::uint32_t cout;
};

// Channels in runs of 4 (vec4 loads) with padding; and odd channels, stride 2,
// dilation 2, no vec4 (no input gradient: it needs stride 1).
const ConvCase kConvs[] = {
    {{2, 9, 7, 8, 9, 7, 3, 3, 1, 1, 1, 1, 1, 1, 1}, 12},
    {{3, 10, 9, 5, 3, 4, 3, 2, 2, 2, 2, 1, 0, 0, 1}, 6},
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
      if (!vk::implicit_conv_supports(g, product)) continue;
      SCOPED_TRACE(fmt::format("{}x{} channels {} -> {}, stride {}, product {}", g.h, g.w, g.c, c.cout, g.stride_h,
                               static_cast<int>(product)));
      const bool filter = product == vk::ConvProduct::filter_gradient;
      const bool input_gradient = product == vk::ConvProduct::input_gradient;
      const std::vector<float>& image = input_gradient ? dy : x;
      const std::size_t count = product == vk::ConvProduct::forward ? dy_size : input_gradient ? x_size : w_size;
      const bool half_result = !filter;  // a filter gradient feeds an optimizer: float32
      const vk::BufferSlice work = arena().allocate(
          std::max<std::uint64_t>(vk::implicit_conv_workspace_bytes(g, c.cout, product, device(), GetParam()), 4), "w");
      const vk::BufferSlice r32 = result(count, false), r16 = result(count, half_result);
      run([&](vk::Recording& r) {
        vk::implicit_conv(r, g, c.cout, product, upload(image), upload(filter ? dy : w), r32, work, GetParam());
        vk::implicit_conv(r, g, c.cout, product, put(image, true), filter ? put(dy, true) : upload(w), r16, work,
                          GetParam());
      });
      EXPECT_EQ(same(get(r16, count), get(r32, count), half_result), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Both, F16Storage, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

class F16StorageErrors : public VkTest {};

TEST_F(F16StorageErrors, AKernelWithoutAFloat16BuildRefusesAFloat16Operand) {
  vk::BufferSlice x = scratch(64);
  x.f16 = true;
  const vk::BufferSlice y = scratch(64);
  vk::Recording recording(device());
  try {
    vk::GemmArgs args;
    args.m = 4, args.n = 4, args.k = 4;
    // gemm_pack reads its source as float16, but writes panels of float32 only.
    vk::BufferSlice bad_workspace = scratch(4096);
    bad_workspace.f16 = true;
    vk::gemm(recording, args, y, x, y, bad_workspace);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::invalid_argument);
    EXPECT_NE(std::string(e.what()).find("binding 1 holds float16 values"), std::string::npos) << e.what();
  }
}

TEST_F(F16StorageErrors, ADeviceWithoutSixteenBitStorageSaysSo) {
  vk::DeviceOptions options = device_options();
  options.f16_storage = false;
  vk::Device plain(instance(), device_index(), options);
  EXPECT_FALSE(plain.f16_storage());
  EXPECT_TRUE(device().f16_storage()) << "lavapipe has storageBuffer16BitAccess";
  vk::Arena arena(plain, vk::MemoryUse::device, "no f16", 1 << 16);
  vk::BufferSlice x = arena.allocate(4096, "x");
  const vk::BufferSlice y = arena.allocate(4096, "y");
  x.f16 = true;
  vk::GemmArgs args;
  args.m = 4, args.n = 4, args.k = 4;
  vk::Recording recording(plain);
  try {
    vk::gemm(recording, args, x, y, y, y);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::unsupported);
    EXPECT_NE(std::string(e.what()).find("storageBuffer16BitAccess"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
