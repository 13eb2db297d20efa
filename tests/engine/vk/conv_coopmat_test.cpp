// conv_coopmat, implicit_conv's GPU kernel on the matrix units, against a direct
// convolution in double precision on the same float16 operands: each of its tilings, as
// a device that measures them may keep one, and the fixed rule, which takes it for
// float16 operands. Where the device has no matrix units (VK_NV_cooperative_matrix),
// skipped with the reason. The shapes take both of its ways to read the patch matrix
// (runs of 8 channels as one load, and element by element: channels not in eights,
// padding, strides, dilations, groups) and a filter gradient split along the pixels at
// a multiple of 16 that is not one of its K tile (32).
//
// Tolerance: the matrix units multiply float16 operands exactly into float32 but need
// not round their sums to nearest, so, as for gemm_coopmat (gemm_variants_test.cpp),
// the worst-case bound for an inner product of t terms with unit roundoff 2^-23:
// (t + 2) 2^-23 sum |terms|.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>

#include "checker.h"
#include "core/half.h"
#include "engine/vk/device.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/memory.h"
#include "reference.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

namespace fs = std::filesystem;

struct Case {
  std::uint32_t n, h, w, c, kh, kw, cout, stride, dilation, pad, groups;
};

vk::ConvPush geometry_of(const Case& k) {
  const std::uint32_t oh = (k.h + 2 * k.pad - k.dilation * (k.kh - 1) - 1) / k.stride + 1;
  const std::uint32_t ow = (k.w + 2 * k.pad - k.dilation * (k.kw - 1) - 1) / k.stride + 1;
  return {k.n, k.h, k.w, k.c, oh, ow, k.kh, k.kw, k.stride, k.stride, k.dilation, k.dilation, k.pad, k.pad, k.groups};
}

constexpr Case kCases[] = {
    {2, 9, 7, 16, 3, 3, 24, 1, 1, 1, 1},    // channels in eights: runs of 8 as one load
    {1, 6, 7, 36, 3, 3, 70, 1, 1, 1, 1},    // channels and columns not in eights
    {1, 9, 8, 5, 2, 3, 66, 2, 1, 0, 1},     // strided, 5 channels, no padding
    {2, 8, 9, 16, 3, 3, 32, 1, 2, 2, 2},    // dilated, two groups of 8 channels
    {16, 16, 16, 16, 3, 3, 16, 1, 1, 1, 1}  // 4096 pixels: the filter gradient in splits
};

constexpr vk::ConvProduct kProducts[] = {vk::ConvProduct::forward, vk::ConvProduct::filter_gradient,
                                         vk::ConvProduct::input_gradient};

class ConvFloat16 : public VkTest {
 protected:
  // The product on `dev`'s GPU path with float16 x, w and dy; the kernels that ran.
  std::vector<std::string> check(vk::Device& dev, const Case& k, vk::ConvProduct product, std::uint64_t seed) {
    const vk::ConvPush g = geometry_of(k);
    const std::vector<float> x = rounded_to_half(random_floats(std::size_t{g.n} * g.h * g.w * g.c, seed));
    const std::vector<float> w =
        rounded_to_half(random_floats(std::size_t{g.kh} * g.kw * (g.c / g.groups) * k.cout, seed + 1));
    const std::vector<float> dy = rounded_to_half(random_floats(std::size_t{g.n} * g.oh * g.ow * k.cout, seed + 2));
    const ConvReference ref = conv_reference(g, k.cout, x, w, dy);
    const bool filter = product == vk::ConvProduct::filter_gradient;
    const bool input = product == vk::ConvProduct::input_gradient;
    const std::vector<double>& want = filter ? ref.dw : input ? ref.dx : ref.out;
    const std::vector<double>& magnitude = filter ? ref.dw_mag : input ? ref.dx_mag : ref.out_mag;
    const std::uint32_t terms = filter ? g.n * g.oh * g.ow : g.kh * g.kw * (input ? k.cout : g.c / g.groups);
    vk::Arena arena(dev, vk::MemoryUse::device, "conv coopmat test");
    const auto half = [&](const std::vector<float>& v) {
      const std::vector<float> words = pack_halves(v);
      vk::BufferSlice slice = arena.allocate(std::max<std::size_t>(words.size() * 4, 16), "operand");
      vk::upload(dev, slice, std::as_bytes(std::span(words)));
      slice.f16 = true;
      return slice;
    };
    const vk::BufferSlice dx_ = half(x), dw_ = half(w), ddy = half(dy);
    const std::vector<float> nans(want.size(), std::nanf(""));
    const vk::BufferSlice result = arena.allocate(nans.size() * 4, "result");
    vk::upload(dev, result, std::as_bytes(std::span(nans)));
    const vk::BufferSlice work = arena.allocate(
        std::max<std::size_t>(vk::implicit_conv_workspace_bytes(g, k.cout, product, dev, vk::KernelChoice::gpu), 16),
        "work");
    vk::Recording recording(dev, {.name = "conv coopmat test", .timestamps = true});
    vk::implicit_conv(recording, {g, k.cout, product}, {input ? ddy : dx_, filter ? ddy : dw_, result, work},
                      vk::KernelChoice::gpu);
    recording.finish();
    recording.run();
    std::vector<float> got(want.size());
    vk::download(dev, result, std::as_writable_bytes(std::span(got)));
    std::vector<double> tol(want.size());
    std::vector<std::string> kernels;
    for (const vk::KernelTime& t : recording.times().kernel_times()) kernels.push_back(t.label);
    const bool units = std::find(kernels.begin(), kernels.end(), "conv_coopmat") != kernels.end();
    for (std::size_t i = 0; i < tol.size(); ++i)
      tol[i] = (units ? (terms + 2.0) * std::ldexp(1.0, -23) : 8.0 * std::sqrt(terms + 2.0) * std::ldexp(1.0, -24)) *
                   magnitude[i] +
               1e-30;
    EXPECT_EQ(compare(got, want, tol), "");
    return kernels;
  }
};

class ConvCoopmat : public ConvFloat16 {
 protected:
  void SetUp() override {
    if (vk::conv_coopmat_tiling_names(device()).empty())
      GTEST_SKIP() << device().label()
                   << " has no matrix units (VK_NV_cooperative_matrix with 16x16x16 float16 products into float32 "
                      "and a fixed subgroup size)";
  }
};

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-conv-coopmat-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

bool ran_coopmat(const std::vector<std::string>& kernels) {
  return std::find(kernels.begin(), kernels.end(), "conv_coopmat") != kernels.end();
}

// Each tiling, put in the cache as if measured, on every case: the kept choice runs
// (nothing is measured) and matches the reference. The input gradient's w' is float16
// too (implicit_conv keeps w's width when it swaps its channel axes).
TEST_F(ConvCoopmat, EveryTilingOfEveryProductMatchesTheReference) {
  for (const std::string& name : vk::conv_coopmat_tiling_names(device())) {
    SCOPED_TRACE(name);
    const fs::path dir = fresh_dir(name);
    vk::DeviceOptions options = device_options();
    options.pipeline_cache_dir = dir.string();
    options.tune = vk::TuneMode::on;
    vk::Device dev(instance(), device_index(), options);
    std::uint64_t seed = 20;
    for (const Case& k : kCases)
      for (vk::ConvProduct product : kProducts) {
        if (!vk::implicit_conv_supports(geometry_of(k), product)) continue;  // input gradient: stride 1, one group
        SCOPED_TRACE(name_of(product));
        SCOPED_TRACE(::testing::Message() << "case of " << k.c << " channels, " << k.cout << " out");
        dev.kernels().tuning().put(
            vk::conv_tuning_key(geometry_of(k), k.cout, product, {.image_f16 = true, .operand_f16 = true}), name);
        const std::uint64_t kept = dev.kernels().tuning().measured();
        EXPECT_TRUE(ran_coopmat(check(dev, k, product, seed += 3)));
        EXPECT_EQ(dev.kernels().tuning().measured(), kept) << "measured instead of taking " << name;
      }
    fs::remove_all(dir);
  }
}

// Without matrix units, conv_tiled takes float16 operands, w' of the input gradient
// float16 too, and computes in float32 (the probabilistic bound of conv_test.cpp).
TEST_F(ConvFloat16, ConvTiledReadsFloat16OperandsWhereThereAreNoMatrixUnits) {
  if (!vk::conv_coopmat_tiling_names(device()).empty()) GTEST_SKIP() << "the matrix units take float16 operands";
  vk::DeviceOptions options = device_options();
  options.tune = vk::TuneMode::off;
  vk::Device dev(instance(), device_index(), options);
  std::uint64_t seed = 40;
  for (const Case& k : {kCases[1], kCases[3]})
    for (vk::ConvProduct product : kProducts) {
      if (!vk::implicit_conv_supports(geometry_of(k), product)) continue;
      SCOPED_TRACE(name_of(product));
      const std::vector<std::string> kernels = check(dev, k, product, seed += 3);
      EXPECT_NE(std::find(kernels.begin(), kernels.end(), "conv_tiled"), kernels.end());
    }
}

// Where nothing is measured, float16 operands take the matrix units.
TEST_F(ConvCoopmat, TheFixedRuleTakesItForFloat16Operands) {
  vk::DeviceOptions options = device_options();
  options.tune = vk::TuneMode::off;
  vk::Device dev(instance(), device_index(), options);
  for (vk::ConvProduct product : kProducts) {
    SCOPED_TRACE(name_of(product));
    EXPECT_TRUE(ran_coopmat(check(dev, kCases[0], product, 5)));
  }
}

}  // namespace
}  // namespace vkp::test
