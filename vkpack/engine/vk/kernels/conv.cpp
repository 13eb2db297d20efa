#include "vkpack/engine/vk/kernels/conv.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "vkpack/core/error.h"
#include "vkpack/engine/vk/kernels/copy.h"
#include "vkpack/engine/vk/kernels/gemm.h"
#include "vkpack/engine/vk/kernels/reduce.h"
#include "vkpack/shaders/embedded.h"

namespace vkp::vk {

std::uint64_t im2col_elements(const ConvPush& g) {
  return std::uint64_t{g.n} * g.oh * g.ow * g.kh * g.kw * g.c;
}

namespace {

// Channels per invocation: whole vec4s when every group's channel run is 4-aligned.
std::uint32_t width_of(const ConvPush& g, const BufferSlice& a, const BufferSlice& b) {
  return (g.c / g.groups) % 4 == 0 && a.offset % 16 == 0 && b.offset % 16 == 0 ? 4 : 1;
}

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

constexpr std::uint64_t kAlign = 256;  // where each part of the workspace starts
std::uint64_t aligned(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// Splits of the filter gradient's pixels: enough workgroups for a multi-core CPU (about
// 16, as gemm_regblock wants) from a product of few panels, each split at least 1024
// pixels, dividing the pixels evenly (so that no split reads past dy); one group only.
std::uint32_t filter_splits(const ConvPush& g, std::uint32_t cout) {
  if (g.groups != 1) return 1;
  const std::uint32_t pixels = g.n * g.oh * g.ow, cols = g.kh * g.kw * g.c;
  const std::uint32_t blocks = div_up(cout, 16) * div_up(cols, 128);
  for (std::uint32_t s = std::min<std::uint32_t>(16, div_up(16, blocks)); s > 1; --s)
    if (pixels % s == 0 && pixels / s >= 1024) return s;
  return 1;
}

// The GEMM of implicit_conv, group by group. X (read in place) is w^T, dy^T or w'; C
// (out, dw or dx) is channel-minor and written transposed.
PanelGemm implicit_gemm(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  const std::uint32_t pixels = g.n * g.oh * g.ow, cg = g.c / g.groups, coutg = cout / g.groups;
  const std::uint32_t cols = g.kh * g.kw * cg;
  PanelGemm gemm;
  gemm.batch = g.groups;
  gemm.x_row = 1;
  gemm.c_row = 1;
  switch (product) {
    case ConvProduct::forward:  // out^T [coutg, pixels] = w^T [coutg, cols] . P^T
      gemm.m = coutg, gemm.n = pixels, gemm.k = cols;
      gemm.x_k = cout, gemm.x_batch = coutg;
      gemm.c_col = cout, gemm.c_batch = coutg;
      break;
    case ConvProduct::filter_gradient: {  // dw^T [coutg, cols] = dy^T [coutg, pixels] . P
      // Split, batch s multiplies pixels [s * k, (s + 1) * k) into partial sum s.
      const std::uint32_t splits = filter_splits(g, cout);
      gemm.m = coutg, gemm.n = cols, gemm.k = pixels / splits;
      gemm.x_k = cout, gemm.x_batch = splits > 1 ? gemm.k * cout : coutg;
      gemm.c_col = cout, gemm.c_batch = splits > 1 ? cols * cout : coutg;
      if (splits > 1) gemm.batch = splits;
      break;
    }
    case ConvProduct::input_gradient:  // dx^T [c, n*h*w] = w' [c, taps*cout] . P'^T
      gemm.m = g.c, gemm.n = g.n * g.h * g.w, gemm.k = g.kh * g.kw * cout;
      gemm.x_k = g.c;
      gemm.c_col = g.c;
      break;
  }
  return gemm;
}

// The geometry conv_pack walks: the convolution's own, or for the input gradient the
// adjoint's, whose image is dy and whose output pixels are x's.
ConvPackPush pack_geometry(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  auto i = [](std::uint32_t v) { return static_cast<std::int32_t>(v); };
  if (product != ConvProduct::input_gradient)
    return {g.n, g.h, g.w, g.c, g.oh, g.ow, g.kh, g.kw, g.stride_h, g.stride_w, i(g.dilation_h), i(g.dilation_w),
            i(g.pad_top), i(g.pad_left), g.groups, 0, 0};
  return {g.n, g.oh, g.ow, cout, g.h, g.w, g.kh, g.kw, 1, 1, -i(g.dilation_h), -i(g.dilation_w), -i(g.pad_top),
          -i(g.pad_left), 1, 0, 0};
}

std::uint64_t swapped_w_bytes(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  return product == ConvProduct::input_gradient ? aligned(std::uint64_t{g.kh} * g.kw * g.c * cout * 4) : 0;
}

// The reduction of split partial sums [splits, dw], or nullopt without splits.
std::optional<ReduceArgs> partial_sums(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  if (product != ConvProduct::filter_gradient || filter_splits(g, cout) == 1) return std::nullopt;
  ReduceArgs args;
  args.axis = filter_splits(g, cout);
  args.inner = g.kh * g.kw * g.c * cout;
  return args;
}

// The workspace: w' (input gradient), the packed patches, then the partial sums and the
// reduction's scratch (split filter gradient).
struct Parts {
  std::uint64_t swapped = 0, packed = 0, partials = 0, reduce = 0;
  std::uint64_t total() const { return swapped + packed + partials + reduce; }
};

Parts parts_of(const ConvPush& g, std::uint32_t cout, ConvProduct product, const Device& device, bool cpu) {
  Parts parts;
  parts.swapped = swapped_w_bytes(g, cout, product);
  if (!cpu) return parts;
  parts.packed = aligned(gemm_panels(implicit_gemm(g, cout, product)).bytes());
  if (const auto sums = partial_sums(g, cout, product)) {
    parts.partials = aligned(std::uint64_t{sums->axis} * sums->inner * 4);
    parts.reduce = aligned(reduce_workspace_bytes(*sums, device));
  }
  return parts;
}

}  // namespace

bool implicit_conv_supports(const ConvPush& g, ConvProduct product) {
  return product != ConvProduct::input_gradient || (g.groups == 1 && g.stride_h == 1 && g.stride_w == 1);
}

std::uint64_t implicit_conv_workspace_bytes(const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                                            const Device& device, KernelChoice choice) {
  return parts_of(geometry, cout, product, device, resolve(choice, device) == DeviceKind::cpu).total();
}

namespace {

// GPUs: conv_tiled reads the patches through the index map in its tile loads.
void implicit_conv_gpu(Recording& recording, const ConvPush& g, std::uint32_t cout, ConvProduct product,
                       const BufferSlice& image, const BufferSlice& b, const BufferSlice& result) {
  const ConvPackPush map = pack_geometry(g, cout, product);
  const std::uint32_t pixels = g.n * g.oh * g.ow, cg = g.c / g.groups, coutg = cout / g.groups;
  ConvTiledPush push{};
  std::memcpy(&push, &map, 15 * 4);  // the geometry, as conv_pack walks it
  switch (product) {
    case ConvProduct::forward:  // out [pixels, coutg] = P [pixels, cols] . w [cols, coutg]
      push.m = pixels, push.cols = coutg, push.k = g.kh * g.kw * cg;
      push.ldb = cout, push.stride_b = coutg, push.ldc = cout, push.stride_c = coutg;
      break;
    case ConvProduct::filter_gradient:  // dw [cols, coutg] = P^T [cols, pixels] . dy [pixels, coutg]
      push.m = g.kh * g.kw * cg, push.cols = coutg, push.k = pixels;
      push.ldb = cout, push.stride_b = coutg, push.ldc = cout, push.stride_c = coutg;
      break;
    case ConvProduct::input_gradient:  // dx [n*h*w, c] = P' [n*h*w, taps*cout] . w' [taps*cout, c]
      push.m = g.n * g.h * g.w, push.cols = g.c, push.k = g.kh * g.kw * cout;
      push.ldb = g.c, push.ldc = g.c;
      break;
  }
  constexpr std::uint32_t kTile = 64, kTileK = 16, kMicro = 4;
  Device& device = recording.device();
  const Kernel& kernel =
      device.kernel(shaders::conv_tiled, {{0, (kTile / kMicro) * (kTile / kMicro)}, {1, kTile}, {2, kTile}, {3, kTileK},
                                          {4, kMicro}, {5, kMicro}, {6, product == ConvProduct::filter_gradient}});
  recording.dispatch(kernel, {image, b, result}, push, {div_up(push.cols, kTile), div_up(push.m, kTile), map.groups},
                     "conv_tiled");
}

}  // namespace

void implicit_conv(Recording& recording, const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                   const BufferSlice& image, const BufferSlice& operand, const BufferSlice& result,
                   const BufferSlice& workspace, KernelChoice choice) {
  const ConvPush& g = geometry;
  if (!implicit_conv_supports(g, product))
    throw Error(ErrorCode::unsupported, "implicit_conv: the input gradient needs one group and stride 1");
  const std::uint64_t x_size = std::uint64_t{g.n} * g.h * g.w * g.c, dy_size = std::uint64_t{g.n} * g.oh * g.ow * cout;
  const std::uint64_t w_size = std::uint64_t{g.kh} * g.kw * (g.c / g.groups) * cout;
  const bool backward_input = product == ConvProduct::input_gradient;
  require_elements(image, backward_input ? dy_size : x_size, "implicit_conv", backward_input ? "dy" : "x");
  require_elements(operand, product == ConvProduct::filter_gradient ? dy_size : w_size, "implicit_conv",
                   product == ConvProduct::filter_gradient ? "dy" : "w");
  const std::uint64_t result_size = product == ConvProduct::forward ? dy_size : backward_input ? x_size : w_size;
  require_elements(result, result_size, "implicit_conv", "the result");
  Device& device = recording.device();
  const bool cpu = resolve(choice, device) == DeviceKind::cpu;
  const Parts parts = parts_of(g, cout, product, device, cpu);
  if (workspace.size < parts.total())
    throw Error(ErrorCode::invalid_argument, "implicit_conv: workspace of " + std::to_string(workspace.size) +
                                                 " bytes, needs " + std::to_string(parts.total()));
  if (result_size == 0) return;
  BufferSlice x_operand = operand;
  if (backward_input) {  // w' [taps][cout][c] = w [taps][c][cout] swapped
    x_operand = workspace.sub(0, w_size * 4);
    transpose(recording, g.kh * g.kw, g.c, cout, operand, x_operand);
  }
  if (!cpu) {
    implicit_conv_gpu(recording, g, cout, product, image, x_operand, result);
    return;
  }
  const PanelGemm gemm = implicit_gemm(g, cout, product);
  const GemmPanels panels = gemm_panels(gemm);
  const BufferSlice packed = workspace.sub(parts.swapped, panels.bytes());
  ConvPackPush push = pack_geometry(g, cout, product);
  const std::uint32_t count = div_up(gemm.n, panels.width);
  push.dst_batch = static_cast<std::uint32_t>(panels.floats / 4);
  push.chunk = gemm_pack_chunk(panels, count);
  push.k_split = gemm.k;
  const bool vector = (push.c / push.groups) % 4 == 0 && image.offset % 16 == 0;
  const Kernel& kernel = device.kernel(
      shaders::conv_pack, {{0, panels.width / 4}, {1, product == ConvProduct::filter_gradient}, {2, vector}});
  recording.dispatch(kernel, {image, packed}, push, {div_up(panels.k_groups, push.chunk), count, gemm.batch},
                     product == ConvProduct::filter_gradient ? "conv_pack_t" : "conv_pack");
  const std::optional<ReduceArgs> sums = partial_sums(g, cout, product);
  if (!sums) {
    gemm_packed(recording, gemm, panels, x_operand, packed, result);
    return;
  }
  const std::uint64_t at = parts.swapped + parts.packed;
  const BufferSlice partials = workspace.sub(at, std::uint64_t{sums->axis} * sums->inner * 4);
  gemm_packed(recording, gemm, panels, x_operand, packed, partials);
  reduce(recording, *sums, partials, result, workspace.sub(at + parts.partials, parts.reduce));
}

void im2col(Recording& recording, const ConvPush& geometry, const BufferSlice& x, const BufferSlice& col,
            bool transposed) {
  require_elements(x, std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c, "im2col", "x");
  require_elements(col, im2col_elements(geometry), "im2col", "col");
  // Transposed, col is written a float at a time: only x needs vec4 alignment.
  const std::uint32_t width = width_of(geometry, x, transposed ? x : col);
  const std::uint64_t items = im2col_elements(geometry) / width;
  if (items == 0) return;
  if (im2col_elements(geometry) > UINT32_MAX)
    throw Error(ErrorCode::unsupported, "im2col: " + std::to_string(im2col_elements(geometry)) + " elements exceed 2^32");
  Device& device = recording.device();
  recording.dispatch(device.kernel(shaders::im2col, {{0, width}, {1, transposed ? 1u : 0u}}), {x, col}, geometry,
                     grid_1d((items + 63) / 64, device), transposed ? "im2col_t" : "im2col");
}

void col2im(Recording& recording, const ConvPush& geometry, const BufferSlice& col, const BufferSlice& dx) {
  const std::uint64_t n = std::uint64_t{geometry.n} * geometry.h * geometry.w * geometry.c;
  require_elements(col, im2col_elements(geometry), "col2im", "col");
  require_elements(dx, n, "col2im", "dx");
  const std::uint32_t width = width_of(geometry, col, dx);
  Device& device = recording.device();
  recording.dispatch(device.kernel(shaders::col2im, {{0, width}}), {col, dx}, geometry,
                     grid_1d((n / width + 63) / 64, device), "col2im");
}

}  // namespace vkp::vk
