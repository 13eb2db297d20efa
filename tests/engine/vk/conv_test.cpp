// Implicit-GEMM convolution (vk::implicit_conv) against a direct convolution in double
// precision, all three products, both kernel variants (conv_pack + gemm_regblock and
// conv_tiled run on any device), at awkward shapes: odd extents, strides, dilations,
// asymmetric windows and padding, groups, channel counts with and without runs of 4,
// and enough pixels for several panels and a split filter gradient. On the GPU path,
// each of conv_tiled's tilings as a device that measures them (ConvTuning) may keep.
//
// Tolerance, per element: 8 sqrt(t + 2) u sum |terms|, u = 2^-24, t the number of terms
// of that element's sum: the probabilistic bound of the GEMM test (gemm_test.cpp), since
// every element is an inner product computed in some order (with the split filter
// gradient, partial inner products added in a fixed order: the same bound covers any
// order).
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <string>

#include "checker.h"
#include "core/error.h"
#include "engine/vk/device.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/memory.h"
#include "engine/vk/transfer.h"
#include "reference.h"
#include "vk_test_env.h"

namespace vkp::test {
namespace {

struct ConvCase {
  std::uint32_t n, h, w, c, kh, kw, cout;
  std::uint32_t stride_h, stride_w, dilation_h, dilation_w, pad_top, pad_left, groups;
};

vk::ConvPush geometry_of(const ConvCase& k) {
  // Padding the same after as before.
  const std::uint32_t oh = (k.h + 2 * k.pad_top - k.dilation_h * (k.kh - 1) - 1) / k.stride_h + 1;
  const std::uint32_t ow = (k.w + 2 * k.pad_left - k.dilation_w * (k.kw - 1) - 1) / k.stride_w + 1;
  return {k.n,          k.h,          k.w,        k.c,       oh,        ow, k.kh, k.kw, k.stride_h, k.stride_w,
          k.dilation_h, k.dilation_w, k.pad_top, k.pad_left, k.groups};
}

// Terms of each product's inner products (at most): the tolerance's t.
std::uint32_t terms(const vk::ConvPush& g, std::uint32_t cout, vk::ConvProduct product) {
  switch (product) {
    case vk::ConvProduct::forward: return g.kh * g.kw * (g.c / g.groups);
    case vk::ConvProduct::filter_gradient: return g.n * g.oh * g.ow;
    case vk::ConvProduct::input_gradient: return g.kh * g.kw * cout;
  }
  return 0;
}

std::vector<double> tolerances(const std::vector<double>& magnitude, std::uint32_t t) {
  std::vector<double> tol(magnitude.size());
  for (std::size_t i = 0; i < tol.size(); ++i) tol[i] = 8.0 * std::sqrt(t + 2.0) * std::ldexp(1.0, -24) * magnitude[i] + 1e-30;
  return tol;
}

class ImplicitConv : public VkTest, public ::testing::WithParamInterface<vk::KernelChoice> {
 protected:
  void check(const ConvCase& k, std::uint64_t seed) {
    const vk::ConvPush g = geometry_of(k);
    const std::uint32_t cout = k.cout;
    const std::vector<float> x = random_floats(std::size_t{g.n} * g.h * g.w * g.c, seed);
    const std::vector<float> w = random_floats(std::size_t{g.kh} * g.kw * (g.c / g.groups) * cout, seed + 1);
    const std::vector<float> dy = random_floats(std::size_t{g.n} * g.oh * g.ow * cout, seed + 2);
    const ConvReference ref = conv_reference(g, cout, x, w, dy);
    const vk::BufferSlice dx_ = upload(x), dw_ = upload(w), ddy = upload(dy);
    for (const vk::ConvProduct product :
         {vk::ConvProduct::forward, vk::ConvProduct::filter_gradient, vk::ConvProduct::input_gradient}) {
      if (!vk::implicit_conv_supports(g, product) &&
          !(GetParam() == vk::KernelChoice::cpu && vk::implicit_conv_supports(g, cout, product, device())))
        continue;
      SCOPED_TRACE(name_of(product));
      const std::vector<double>& want = product == vk::ConvProduct::forward           ? ref.out
                                        : product == vk::ConvProduct::filter_gradient ? ref.dw
                                                                                      : ref.dx;
      const std::vector<double>& magnitude = product == vk::ConvProduct::forward           ? ref.out_mag
                                             : product == vk::ConvProduct::filter_gradient ? ref.dw_mag
                                                                                           : ref.dx_mag;
      // The result starts as NaN: every element must be written.
      const vk::BufferSlice result = upload(std::vector<float>(want.size(), std::nanf("")));
      const vk::BufferSlice work = arena().allocate(
          std::max<std::size_t>(vk::implicit_conv_workspace_bytes(g, cout, product, device(), GetParam()), 16), "work");
      vk::Recording recording(device(), {.name = "implicit conv test"});
      const vk::BufferSlice& image = product == vk::ConvProduct::input_gradient ? ddy : dx_;
      const vk::BufferSlice& operand = product == vk::ConvProduct::filter_gradient ? ddy : dw_;
      vk::implicit_conv(recording, {g, cout, product}, {image, operand, result, work}, GetParam());
      dispatches_.emplace_back(product, recording.times().dispatch_count());
      recording.finish();
      recording.run();
      EXPECT_EQ(compare(download(result, want.size()), want, tolerances(magnitude, terms(g, cout, product))), "");
    }
  }
  std::vector<std::pair<vk::ConvProduct, std::size_t>> dispatches_;  // of each product check() ran
};

TEST_P(ImplicitConv, OddShapesPaddedAndStrided) {
  check({2, 7, 6, 3, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1}, 1);   // SAME 3x3, 3 channels
  check({2, 9, 8, 2, 3, 2, 4, 2, 2, 1, 1, 0, 0, 1}, 2);   // VALID, stride 2, 3x2 window
  check({1, 11, 10, 5, 2, 3, 7, 2, 1, 1, 1, 1, 0, 1}, 3); // stride 2x1, padding on top only
}

TEST_P(ImplicitConv, DilatedAndGrouped) {
  check({1, 9, 9, 2, 3, 3, 3, 1, 1, 2, 2, 2, 2, 1}, 4);   // dilation 2
  check({1, 9, 8, 4, 2, 3, 5, 1, 1, 2, 1, 0, 1, 1}, 5);   // dilation 2x1, asymmetric window
  check({2, 5, 5, 4, 3, 3, 6, 1, 1, 1, 1, 1, 1, 2}, 6);   // 2 groups of 2 channels
  check({1, 6, 5, 8, 3, 3, 8, 1, 2, 1, 1, 1, 1, 2}, 7);   // 2 groups of 4 channels, stride 1x2
}

TEST_P(ImplicitConv, ChannelRunsOfFourAndManyPixels) {
  check({2, 6, 7, 8, 3, 3, 12, 1, 1, 1, 1, 1, 1, 1}, 8);    // every vec4 path
  check({3, 13, 11, 4, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1}, 9);   // 429 pixels: several panels
  check({2, 33, 32, 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1}, 10);  // 2112 pixels: split filter gradient
  check({2, 32, 33, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1}, 11);
  check({2, 33, 31, 4, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1}, 17);  // 2046 pixels: uneven splits, not in fours
}

// conv_tiled's three tilings on GPUs (128 x 16, 128 x 32 and 64 x 64 by the product's
// columns: cout, or c for the input gradient), with channel counts off every tile.
TEST_P(ImplicitConv, EveryTileWidth) {
  check({2, 7, 9, 20, 3, 3, 24, 1, 1, 1, 1, 1, 1, 1}, 18);  // 24 and 20 columns: 128 x 32
  check({1, 6, 7, 36, 3, 3, 70, 1, 1, 1, 1, 1, 1, 1}, 19);  // 70 and 36 columns: 64 x 64
  check({1, 5, 6, 66, 2, 2, 9, 2, 1, 1, 1, 0, 0, 1}, 20);   // 9 and 66 columns, strided
}

// On a CPU device, convolutions of one group read the image in place (conv_regblock,
// through texel buffers where the slices can be texel views, else as storage buffers),
// the input gradient of a strided one too (only there: phase by phase where the
// dilation is 1); elsewhere patches are packed first (conv_pack, then gemm_regblock).
// The input gradient's map walks dy with negative dilation and padding.
// (OddShapesPaddedAndStrided covers channels not in runs of 4, ChunksOfPixels the
// filter gradient's split into partial sums.)
TEST_P(ImplicitConv, ReadsTheImageInPlaceWhereItCan) {
  const bool in_place = GetParam() == vk::KernelChoice::cpu && device().kind() == vk::DeviceKind::cpu;
  check({2, 9, 7, 8, 3, 3, 12, 2, 2, 1, 1, 1, 1, 1}, 13);         // strided: the input gradient only in place
  check({3, 10, 9, 12, 3, 2, 8, 1, 1, 2, 1, 2, 1, 1}, 14);        // dilated
  check({2, 8, 9, 4, 3, 3, 8, 2, 2, 2, 1, 1, 2, 1}, 15);          // strided and dilated
  if (GetParam() != vk::KernelChoice::cpu) return;
  // Packing: w swapped (not for the filter gradient), conv_pack, gemm_regblock. In
  // place: w swapped, conv_regblock; the first case's input gradient (stride 2,
  // dilation 1) phase by phase, 4 dispatches; the third's (dilated) every tap masked.
  const std::vector<std::size_t> want =
      in_place ? std::vector<std::size_t>{2, 1, 5, 2, 1, 2, 2, 1, 2} : std::vector<std::size_t>{3, 2, 3, 2, 3, 3, 2};
  ASSERT_EQ(dispatches_.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(name_of(dispatches_[i].first));
    EXPECT_EQ(dispatches_[i].second, want[i]) << "product " << i;
  }
}

// The strided input gradient phase by phase, where phases have no taps (a 1x1 kernel at
// stride 2, as a ResNet's projection shortcut: 3 phases are zeros), strides differ
// (2x1: 2 phases), or a phase has no pixels (h 2 at stride 3). The result starts as
// NaN, so a phase left unwritten fails; where conv_regblock runs, the dispatch count
// is w's swap and one per phase with pixels. With cout 6 it is not offered (dy's
// channels not in runs of 4: kScalar's stepping knows no phases).
TEST_P(ImplicitConv, StridedInputGradientByPhases) {
  if (GetParam() != vk::KernelChoice::cpu) GTEST_SKIP() << "GPU path: stride 1 only";
  const bool phases = device().kind() == vk::DeviceKind::cpu;
  struct Case {
    ConvCase k;
    std::size_t phases_with_pixels;
  };
  // clang-format off
  const Case cases[] = {{{2, 9, 7, 8, 1, 1, 8, 2, 2, 1, 1, 0, 0, 1}, 4},
                        {{2, 9, 8, 4, 3, 3, 8, 2, 1, 1, 1, 1, 1, 1}, 2},
                        {{1, 2, 7, 4, 3, 3, 4, 3, 2, 1, 1, 1, 1, 1}, 4}};
  // clang-format on
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "stride " << c.k.stride_h << "x" << c.k.stride_w << ", kernel " << c.k.kh << "x"
                                    << c.k.kw << ", h " << c.k.h);
    dispatches_.clear();
    check(c.k, 40 + c.k.h);
    EXPECT_EQ(vk::implicit_conv_supports(geometry_of(c.k), c.k.cout, vk::ConvProduct::input_gradient, device()),
              phases);
    if (!phases) continue;
    ASSERT_EQ(dispatches_.size(), 3u);
    EXPECT_EQ(dispatches_[2].second, 1 + c.phases_with_pixels);
  }
  ConvCase six{2, 9, 7, 8, 3, 3, 6, 2, 2, 1, 1, 1, 1, 1};
  EXPECT_FALSE(vk::implicit_conv_supports(geometry_of(six), 6, vk::ConvProduct::input_gradient, device()));
}

// Slices that cannot be texel views (x of 75 and 105 float32s: not whole vec4s) are
// read by conv_regblock's storage-buffer build, in the same dispatches and workspace as
// through texel views: the forward pass and the filter gradient here; the input
// gradients read dy (whole vec4s) and so take that build only where every slice does
// (VKPACK_TEXEL_BUFFERS=0, as CI's second leg runs this), the strided one phase by phase
// (the 7 x 5 image's 4 phases).
TEST_P(ImplicitConv, ReadsSlicesThatAreNoTexelViewsAsStorageBuffers) {
  if (GetParam() != vk::KernelChoice::cpu || device().kind() != vk::DeviceKind::cpu)
    GTEST_SKIP() << "conv_regblock runs on CPU devices";
  check({1, 5, 5, 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1}, 50);
  check({1, 7, 5, 3, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1}, 51);
  const std::vector<std::size_t> want = {2, 1, 2, 2, 1, 5};
  ASSERT_EQ(dispatches_.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i) {
    SCOPED_TRACE(name_of(dispatches_[i].first));
    EXPECT_EQ(dispatches_[i].second, want[i]) << "product " << i;
  }
}

// 16384 pixels of 3x3x16 patches: where the CPU path packs them, more than
// kPackedChunkBytes, so it runs in chunks of pixels (forward and input gradient:
// 14464 + 1920; filter gradient: 10880 + 5504, each cut into partial sums); where
// conv_regblock reads them in place, the filter gradient in partial sums. In 2 groups
// (never in place) the CPU path packs 9 MiB in chunks.
TEST_P(ImplicitConv, ChunksOfPixels) {
  check({4, 64, 64, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1}, 12);
  check({4, 64, 64, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 2}, 16);
}

// On the GPU path the filter gradient (few tiles of dw, K the pixels) is cut along the
// pixels into partial sums that a reduction adds: conv_tiled and reduce. 84 pixels are
// too few to split; 2046 over one tile make 7 splits of 304 pixels (the last 222); 16384
// pixels in 2 groups of 2 tiles each, 64 splits of 256. The result starts as NaN and is compared with the
// reference, so a split that reads past its part of K, or a partial sum written over
// another, fails.
TEST_P(ImplicitConv, TheGpuFilterGradientSumsSplitsOfThePixels) {
  if (GetParam() != vk::KernelChoice::gpu) GTEST_SKIP() << "conv_tiled is the GPU path";
  check({2, 7, 6, 3, 3, 3, 5, 1, 1, 1, 1, 1, 1, 1}, 31);
  check({2, 33, 31, 4, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1}, 32);
  check({4, 64, 64, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 2}, 33);
  std::vector<std::size_t> filter_gradient;
  for (const auto& [product, count] : dispatches_)
    if (product == vk::ConvProduct::filter_gradient) filter_gradient.push_back(count);
  EXPECT_EQ(filter_gradient, (std::vector<std::size_t>{1, 2, 2}));
}

// GEMM epilogues (shaders/epilogue.glsl) on the forward pass (bias along the output
// channels, then relu) and on the input gradient (gated by relu's derivative at a
// tensor laid out as dx), in the CPU path's chunks too: against the reference, then the
// epilogue, in double.
TEST_P(ImplicitConv, EpiloguesOnTheForwardPassAndTheInputGradient) {
  for (const ConvCase& k : {ConvCase{2, 7, 6, 4, 3, 3, 8, 1, 1, 1, 1, 1, 1, 1},
                            ConvCase{4, 64, 64, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, 1}}) {
    const vk::ConvPush g = geometry_of(k);
    const std::uint32_t cout = k.cout;
    const std::vector<float> x = random_floats(std::size_t{g.n} * g.h * g.w * g.c, 21);
    const std::vector<float> w = random_floats(std::size_t{g.kh} * g.kw * g.c * cout, 22);
    const std::vector<float> dy = random_floats(std::size_t{g.n} * g.oh * g.ow * cout, 23);
    const std::vector<float> bias = random_floats(cout, 24), gate = random_floats(x.size(), 25);
    const ConvReference ref = conv_reference(g, cout, x, w, dy);
    const vk::BufferSlice dx_ = upload(x), dw_ = upload(w), ddy = upload(dy);
    for (const vk::ConvProduct product : {vk::ConvProduct::forward, vk::ConvProduct::input_gradient}) {
      const bool forward = product == vk::ConvProduct::forward;
      SCOPED_TRACE(name_of(product));
      vk::GemmEpilogue epilogue;
      std::vector<double> want = forward ? ref.out : ref.dx, magnitude = forward ? ref.out_mag : ref.dx_mag;
      for (std::size_t i = 0; i < want.size(); ++i) {
        if (forward) {
          want[i] = std::max(want[i] + bias[i % cout], 0.0);
          magnitude[i] += std::abs(bias[i % cout]);
        } else if (gate[i] <= 0) {
          want[i] = 0.0;
        }
      }
      if (forward) {
        epilogue.bias = upload(bias);
        epilogue.activation = vk::UnaryOp::relu;
      } else {
        epilogue.gate = upload(gate);
        epilogue.gate_fn = vk::BinaryOp::relu_grad;
      }
      const vk::BufferSlice result = upload(std::vector<float>(want.size(), std::nanf("")));
      const vk::BufferSlice work = arena().allocate(
          std::max<std::size_t>(vk::implicit_conv_workspace_bytes(g, cout, product, device(), GetParam()), 16), "work");
      vk::Recording recording(device(), {.name = "implicit conv epilogue test"});
      vk::implicit_conv(recording, {g, cout, product}, {forward ? dx_ : ddy, dw_, result, work}, GetParam(), epilogue);
      recording.finish();
      recording.run();
      EXPECT_EQ(compare(download(result, want.size()), want, tolerances(magnitude, terms(g, cout, product))), "");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Both, ImplicitConv, ::testing::Values(vk::KernelChoice::cpu, vk::KernelChoice::gpu),
                         [](const auto& p) { return p.param == vk::KernelChoice::cpu ? "cpu" : "gpu"; });

// --- conv_tiled's tiling measured per device (vk::TuningCache), on the GPU path ---

namespace fs = std::filesystem;

fs::path fresh_dir(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("vkpack-conv-tuning-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(dir);
  return dir;
}

vk::DeviceOptions tuning_on(const fs::path& dir) {
  vk::DeviceOptions o = device_options();
  o.pipeline_cache_dir = dir.string();
  o.tune = vk::TuneMode::on;
  return o;
}

// One product on `dev`'s GPU path, against the double reference.
void check_on(vk::Device& dev, const ConvCase& k, vk::ConvProduct product, std::uint64_t seed) {
  SCOPED_TRACE(name_of(product));
  const vk::ConvPush g = geometry_of(k);
  const std::vector<float> x = random_floats(std::size_t{g.n} * g.h * g.w * g.c, seed);
  const std::vector<float> w = random_floats(std::size_t{g.kh} * g.kw * (g.c / g.groups) * k.cout, seed + 1);
  const std::vector<float> dy = random_floats(std::size_t{g.n} * g.oh * g.ow * k.cout, seed + 2);
  const ConvReference ref = conv_reference(g, k.cout, x, w, dy);
  const bool forward = product == vk::ConvProduct::forward, filter = product == vk::ConvProduct::filter_gradient;
  const std::vector<double>& want = forward ? ref.out : filter ? ref.dw : ref.dx;
  const std::vector<double>& magnitude = forward ? ref.out_mag : filter ? ref.dw_mag : ref.dx_mag;
  vk::Arena arena(dev, vk::MemoryUse::device, "conv tuning test");
  const auto put = [&](const std::vector<float>& v) {
    const vk::BufferSlice slice = arena.allocate(v.size() * 4, "operand");
    vk::upload(dev, slice, std::as_bytes(std::span(v)));
    return slice;
  };
  const vk::BufferSlice dx_ = put(x), dw_ = put(w), ddy = put(dy);
  const vk::BufferSlice result = put(std::vector<float>(want.size(), std::nanf("")));
  const vk::BufferSlice work = arena.allocate(
      std::max<std::size_t>(vk::implicit_conv_workspace_bytes(g, k.cout, product, dev, vk::KernelChoice::gpu), 16),
      "work");
  vk::Recording recording(dev, {.name = "conv tuning test"});
  vk::implicit_conv(recording, {g, k.cout, product},
                    {product == vk::ConvProduct::input_gradient ? ddy : dx_, filter ? ddy : dw_, result, work},
                    vk::KernelChoice::gpu);
  recording.finish();
  recording.run();
  std::vector<float> got(want.size());
  vk::download(dev, result, std::as_writable_bytes(std::span(got)));
  EXPECT_EQ(compare(got, want, tolerances(magnitude, terms(g, k.cout, product))), "");
}

constexpr vk::ConvProduct kProducts[] = {vk::ConvProduct::forward, vk::ConvProduct::filter_gradient,
                                         vk::ConvProduct::input_gradient};

TEST(ConvTuning, EachProductIsMeasuredOnceAndTheNextDeviceReadsTheChoice) {
  const fs::path dir = fresh_dir("once");
  const ConvCase k{2, 9, 8, 20, 3, 3, 24, 1, 1, 1, 1, 1, 1, 1};
  const ConvCase same_class{2, 9, 8, 18, 3, 3, 22, 1, 1, 1, 1, 1, 1, 1};
  EXPECT_EQ(vk::conv_tuning_key(geometry_of(k), 24, vk::ConvProduct::forward, vk::ConvWidths{}),
            "conv_tiled forward m256 n32 k256");
  EXPECT_EQ(vk::conv_tuning_key(geometry_of(same_class), 22, vk::ConvProduct::forward, vk::ConvWidths{}),
            vk::conv_tuning_key(geometry_of(k), 24, vk::ConvProduct::forward, vk::ConvWidths{}));
  const std::vector<std::string> names = vk::conv_tiling_names();
  std::vector<std::string> chosen;
  {
    vk::Device dev(instance(), device_index(), tuning_on(dir));
    for (vk::ConvProduct product : kProducts) check_on(dev, k, product, 1);
    EXPECT_EQ(dev.kernels().tuning().measured(), 3u);
    for (vk::ConvProduct product : kProducts) {
      const std::optional<std::string> kept =
          dev.kernels().tuning().get(vk::conv_tuning_key(geometry_of(k), 24, product, vk::ConvWidths{}));
      ASSERT_TRUE(kept.has_value());
      EXPECT_NE(std::find(names.begin(), names.end(), *kept), names.end()) << *kept;
      chosen.push_back(*kept);
    }
    check_on(dev, same_class, vk::ConvProduct::forward, 4);  // the same class: the kept choice
    EXPECT_EQ(dev.kernels().tuning().measured(), 3u);
  }
  {
    vk::Device again(instance(), device_index(), tuning_on(dir));
    for (vk::ConvProduct product : kProducts) check_on(again, k, product, 7);
    EXPECT_EQ(again.kernels().tuning().measured(), 0u);
    for (std::size_t i = 0; i < 3; ++i)
      EXPECT_EQ(again.kernels().tuning().get(vk::conv_tuning_key(geometry_of(k), 24, kProducts[i], vk::ConvWidths{})),
                chosen[i]);
  }
  fs::remove_all(dir);
}

// Whichever tiling a device keeps, every product is right: each tiling, put in the cache
// as if measured, on columns that fill several of its tiles (70), part of one (9), and
// a strided forward pass.
TEST(ConvTuning, EveryTilingOfEveryProductMatchesTheReference) {
  const ConvCase cases[] = {{1, 6, 7, 36, 3, 3, 70, 1, 1, 1, 1, 1, 1, 1}, {2, 7, 6, 9, 3, 3, 9, 1, 1, 1, 1, 1, 1, 1},
                            {1, 9, 8, 5, 2, 3, 66, 2, 2, 1, 1, 0, 1, 1}};
  for (const std::string& name : vk::conv_tiling_names()) {
    SCOPED_TRACE(name);
    const fs::path dir = fresh_dir(name);
    vk::Device dev(instance(), device_index(), tuning_on(dir));
    std::uint64_t seed = 10;
    for (const ConvCase& k : cases)
      for (vk::ConvProduct product : kProducts) {
        if (!vk::implicit_conv_supports(geometry_of(k), product)) continue;
        dev.kernels().tuning().put(vk::conv_tuning_key(geometry_of(k), k.cout, product, vk::ConvWidths{}), name);
        const std::uint64_t kept = dev.kernels().tuning().measured();
        check_on(dev, k, product, seed += 3);
        EXPECT_EQ(dev.kernels().tuning().measured(), kept) << "measured instead of taking " << name;
      }
    fs::remove_all(dir);
  }
}

TEST(ImplicitConvChecker, RejectsZerosAnElementBeyondItsToleranceAndATransposedResult) {
  const ConvCase k{1, 6, 5, 3, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1};
  const vk::ConvPush g = geometry_of(k);
  const ConvReference ref = conv_reference(g, 4, random_floats(6 * 5 * 3, 1), random_floats(3 * 3 * 3 * 4, 2),
                                           random_floats(g.oh * g.ow * 4, 3));
  expect_checker_rejects(ref.out, tolerances(ref.out_mag, terms(g, 4, vk::ConvProduct::forward)), g.oh * g.ow, 4,
                         "implicit conv");
}

class ImplicitConvErrors : public VkTest {};

// The workspace of a CPU device stays near kPackedChunkBytes however many pixels there
// are (examples/resnet's first stage at batch 128 would pack 58 MB at once).
TEST_F(ImplicitConvErrors, TheCpuWorkspaceIsBoundedByTheChunk) {
  // Where conv_regblock reads the image in place (one group, on a CPU device), only w
  // swapped and the filter gradient's partial sums; 2 groups pack.
  const bool in_place = device().kind() == vk::DeviceKind::cpu;
  for (const std::uint32_t groups : {1u, 2u}) {
    const vk::ConvPush g = geometry_of({128, 28, 28, 16, 3, 3, 16, 1, 1, 1, 1, 1, 1, groups});
    for (const vk::ConvProduct product :
         {vk::ConvProduct::forward, vk::ConvProduct::filter_gradient, vk::ConvProduct::input_gradient}) {
      if (!vk::implicit_conv_supports(g, product)) continue;
      SCOPED_TRACE(std::string(name_of(product)) + " in " + std::to_string(groups) + " groups");
      const std::uint64_t bytes = vk::implicit_conv_workspace_bytes(g, 16, product, device(), vk::KernelChoice::cpu);
      if (in_place && groups == 1) {
        EXPECT_LT(bytes, vk::kPackedChunkBytes / 16);
        continue;
      }
      EXPECT_LE(bytes, vk::kPackedChunkBytes + (1 << 20));
      EXPECT_GT(bytes, vk::kPackedChunkBytes / 2);
    }
  }
}

// A strided input gradient runs only in conv_regblock (a CPU device, cout a multiple
// of 4): elsewhere, and with a cout of 6, it is an error.
TEST_F(ImplicitConvErrors, AStridedInputGradientAndASmallWorkspaceAreErrors) {
  const vk::ConvPush strided = geometry_of({1, 8, 8, 4, 3, 3, 4, 2, 2, 1, 1, 1, 1, 1});
  EXPECT_FALSE(vk::implicit_conv_supports(strided, vk::ConvProduct::input_gradient));
  const bool in_place = device().kind() == vk::DeviceKind::cpu;
  EXPECT_EQ(vk::implicit_conv_supports(strided, 4, vk::ConvProduct::input_gradient, device()), in_place);
  EXPECT_FALSE(vk::implicit_conv_supports(strided, 6, vk::ConvProduct::input_gradient, device()));
  const vk::BufferSlice big = scratch(1 << 16);
  vk::Recording recording(device(), {.name = "errors"});
  EXPECT_THROW(vk::implicit_conv(recording, {strided, 6, vk::ConvProduct::input_gradient}, {big, big, big, big}),
               Error);
  EXPECT_THROW(vk::implicit_conv(recording, {strided, 4, vk::ConvProduct::input_gradient}, {big, big, big, big},
                                 vk::KernelChoice::gpu),
               Error);
  const vk::ConvPush g = geometry_of({1, 8, 8, 4, 3, 3, 4, 1, 1, 1, 1, 1, 1, 1});
  const std::size_t need = vk::implicit_conv_workspace_bytes(g, 4, vk::ConvProduct::forward, device(), vk::KernelChoice::cpu);
  try {
    vk::implicit_conv(recording, {g, 4, vk::ConvProduct::forward}, {big, big, big, big.sub(0, need - 4)},
                      vk::KernelChoice::cpu);
    ADD_FAILURE() << "a workspace 4 bytes short was accepted";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("workspace"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace vkp::test
