// implicit_conv's GPU path: conv_tiled everywhere, conv_coopmat on the matrix units for
// float16 operands, and the tiling measured fastest per device and shape class
// (TuningCache). implicit_conv.cpp holds the checks, the CPU path and the dispatch.
#include <fmt/format.h>

#include <cstring>
#include <iterator>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "core/log.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/implicit_conv.h"
#include "engine/vk/kernels/internal/conv_plan.h"
#include "engine/vk/kernels/launch.h"
#include "engine/vk/kernels/reduce.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

// conv_tiled's blockings, each K 16 at a time with 256 invocations, and conv_coopmat's,
// K 32 at a time in subgroups of (tile_m / subgroups_m / 16) x (tile_n / subgroups_n /
// 16) fragments. The fixed rule (conv_tiling) takes a 64 x 64 tile, or for the few
// columns of a small-channel layer (a ResNet's 16) a taller, narrower one, so that no
// column of the tile is idle, and conv_coopmat's 128 x 128 for many columns; where
// tuning is on the device measures the candidates for each shape class instead.
struct ConvTiling {
  std::uint32_t tile_m, tile_n;
  std::uint32_t micro_m = 0, micro_n = 0;          // conv_tiled: each invocation's block
  std::uint32_t subgroups_m = 0, subgroups_n = 0;  // conv_coopmat (0: conv_tiled)
  bool on_matrix_units() const { return subgroups_m != 0; }
  std::uint32_t threads(const Device& device) const {
    return on_matrix_units() ? subgroups_m * subgroups_n * device.limits().subgroup_size
                             : (tile_m / micro_m) * (tile_n / micro_n);
  }
  std::string name() const { return fmt::format("{}{}x{}", on_matrix_units() ? "coopmat_" : "", tile_m, tile_n); }
};
constexpr ConvTiling kConvTilings[] = {{128, 16, 4, 2}, {128, 32, 4, 4}, {64, 64, 4, 4}};
constexpr ConvTiling kConvCoopTilings[] = {
    {128, 16, 0, 0, 4, 1}, {128, 32, 0, 0, 4, 1}, {64, 64, 0, 0, 2, 2}, {128, 128, 0, 0, 2, 4}};
constexpr std::uint32_t kGpuTileK = 16, kCoopTileK = 32;
ConvTiling conv_tiling(std::uint32_t cols) { return kConvTilings[cols <= 16 ? 0 : cols <= 32 ? 1 : 2]; }
ConvTiling conv_coop_tiling(std::uint32_t cols) {
  return kConvCoopTilings[cols <= 16 ? 0 : cols <= 32 ? 1 : cols <= 64 ? 2 : 3];
}

// Whether conv_coopmat may run this product: matrix units, and both operands float16.
bool coopmat_applies(const Device& device, ConvWidths widths) {
  return widths.image_f16 && widths.operand_f16 && has_matrix_units(device);
}

// conv_tiled's filter gradient dw = P^T . dy is (taps * cg) x coutg per group with K the
// pixels: a ResNet's 3x3x16 -> 16 layer at batch 128 is 2 tiles over 100352 pixels,
// which would leave a GPU all but idle (it took 99% of the step on an H100). Its pixels
// are split for about 512 workgroups (a few per multiprocessor of a large GPU), in whole
// K tiles of conv_tiled, counted with the fixed rule's tiling (the workspace must not
// depend on a measurement; conv_coopmat's K tile of 32 may cross a split's end, and
// masks what lies past it). Other products: one split.
PixelSplits gpu_splits(const ConvPush& g, std::uint32_t cout, ConvProduct product, const Device& device) {
  if (product != ConvProduct::filter_gradient) return {};
  const ConvTiling t = conv_tiling(cout / g.groups);
  const std::uint64_t tiles =
      std::uint64_t{div_up(g.kh * g.kw * (g.c / g.groups), t.tile_m)} * div_up(cout / g.groups, t.tile_n) * g.groups;
  return pixel_splits(g.n * g.oh * g.ow, tiles, 512, kGpuTileK, dw_elements(g, cout), device);
}

// The GEMM each product is on a GPU: rows m, columns, and K.
struct ProductShape {
  std::uint32_t m, cols, k;
};
ProductShape product_shape(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  const std::uint32_t pixels = g.n * g.oh * g.ow, cg = g.c / g.groups, coutg = cout / g.groups;
  switch (product) {
    case ConvProduct::forward: return {pixels, coutg, g.kh * g.kw * cg};                  // out = P . w
    case ConvProduct::filter_gradient: return {g.kh * g.kw * cg, coutg, pixels};          // dw = P^T . dy
    case ConvProduct::input_gradient: return {g.n * g.h * g.w, g.c, g.kh * g.kw * cout};  // dx = P' . w'
  }
  return {};
}

// The kernel's constants: conv_tiled's tiling, or conv_coopmat's with the widths of its
// 16-byte runs (shaders/conv_coopmat.comp's kRunsP, kRunsB) and the float16 mask.
std::vector<SpecConstant> conv_constants(const Device& device, const ConvTiling& t, ConvProduct product,
                                         const ConvTiledPush& push, std::span<const BufferSlice> bindings) {
  const bool filter = product == ConvProduct::filter_gradient;
  if (!t.on_matrix_units())
    return {{0, t.threads(device)}, {1, t.tile_m},  {2, t.tile_n}, {3, kGpuTileK},
            {4, t.micro_m},         {5, t.micro_n}, {6, filter}};
  const std::uint32_t cg = push.c / push.groups, unit = bindings[1].f16 ? 8 : 4;
  return {{0, t.threads(device)},
          {6, filter},
          {7, push.c % 8 == 0 && cg % 8 == 0},
          {8, push.ldb % unit == 0 && (push.groups == 1 || push.stride_b % unit == 0)},
          {10, t.subgroups_m},
          {11, t.subgroups_n},
          {12, t.tile_m / t.subgroups_m / 16},
          {13, t.tile_n / t.subgroups_n / 16},
          {14, kCoopTileK},
          {15, device.limits().subgroup_size},
          {kF16BindingsId, f16_mask(bindings)}};
}

void conv_gpu(Recording& recording, const ConvProblem& problem, const ConvRun& run, const ConvTiling& t) {
  const ConvPush& g = problem.geometry;
  const std::uint32_t cout = problem.cout;
  const ConvProduct product = problem.product;
  const BufferSlice &image = run.slices.image, &b = run.slices.operand, &result = run.slices.result,
                    &workspace = run.slices.workspace;
  const std::uint64_t at = run.at;
  const GemmEpilogue& epilogue = run.epilogue;
  Device& device = recording.device();
  const PixelSplits q = gpu_splits(g, cout, product, device);
  const BufferSlice partials = q.splits > 1 ? workspace.sub(at, q.partial_bytes) : result;
  const ConvPackPush map = map_of(g, cout, product);
  const ProductShape shape = product_shape(g, cout, product);
  ConvTiledPush push{};
  std::memcpy(&push, &map, 15 * 4);  // the geometry
  push.m = shape.m, push.cols = shape.cols, push.k = shape.k;
  if (product == ConvProduct::input_gradient)
    push.ldb = g.c, push.ldc = g.c;
  else
    push.ldb = cout, push.stride_b = shape.cols, push.ldc = cout, push.stride_c = shape.cols;
  push.bias_row = 0;
  push.bias_col = 1;
  push.act_alpha = epilogue.activation_alpha;
  push.gate_alpha = epilogue.gate_alpha;
  push.k_split = q.splits > 1 ? q.k_split : push.k;
  push.split_stride = q.splits > 1 ? q.sums.inner : 0;  // dw's elements
  const BufferSlice bindings[] = {image, b, partials, epilogue_bias_binding(epilogue, image),
                                  epilogue_extra_binding(epilogue, image)};
  std::vector<SpecConstant> constants = conv_constants(device, t, product, push, bindings);
  add_gemm_epilogue_constants(constants, epilogue);
  const Kernel& kernel = t.on_matrix_units() ? device.kernel(shaders::conv_coopmat, std::move(constants))
                                             : storage_kernel(device, shaders::conv_tiled, shaders::conv_tiled_f16,
                                                              bindings, std::move(constants));
  recording.dispatch(kernel, bindings, push,
                     {div_up(push.cols, t.tile_n), div_up(push.m, t.tile_m), map.groups * q.splits},
                     t.on_matrix_units() ? "conv_coopmat" : "conv_tiled");
  if (q.splits > 1) reduce(recording, q.sums, partials, result, workspace.sub(at + q.partial_bytes, q.reduce_bytes));
}

// Operands larger than this are not copied for a measurement: the fixed rule decides.
constexpr std::uint64_t kMaxTuningBytes = std::uint64_t{1} << 30;

// The fixed rule's tiling, and the candidates a device measures.
ConvTiling fixed_tiling(const Device& device, const ConvPush& g, std::uint32_t cout, ConvProduct product,
                        ConvWidths widths) {
  const std::uint32_t cols = product_shape(g, cout, product).cols;
  return coopmat_applies(device, widths) ? conv_coop_tiling(cols) : conv_tiling(cols);
}
std::vector<ConvTiling> tiling_candidates(const Device& device, ConvWidths widths) {
  std::vector<ConvTiling> all(std::begin(kConvTilings), std::end(kConvTilings));
  if (coopmat_applies(device, widths)) all.insert(all.end(), std::begin(kConvCoopTilings), std::end(kConvCoopTilings));
  return all;
}

// The fastest tiling for this product's shape class on this device, measured on zeros of
// the caller's shapes and widths (three back-to-back runs of each, replayed in turn with
// the others: interleaved_replay_ns); the fixed rule where the operands exceed
// kMaxTuningBytes.
ConvTiling measure_tiling(Device& device, const ConvPush& g, std::uint32_t cout, ConvProduct product,
                          ConvWidths widths) {
  const std::uint64_t x_size = std::uint64_t{g.n} * g.h * g.w * g.c, dy_size = std::uint64_t{g.n} * g.oh * g.ow * cout;
  const std::uint64_t w_size = dw_elements(g, cout);
  const bool backward_input = product == ConvProduct::input_gradient, filter = product == ConvProduct::filter_gradient;
  const std::uint64_t image_bytes = (backward_input ? dy_size : x_size) * (widths.image_f16 ? 2 : 4);
  const std::uint64_t operand_bytes = (filter ? dy_size : w_size) * (widths.operand_f16 ? 2 : 4);
  const std::uint64_t result_bytes = (product == ConvProduct::forward ? dy_size : backward_input ? x_size : w_size) * 4;
  const std::uint64_t work_bytes = gpu_splits(g, cout, product, device).bytes();
  const ConvTiling fixed = fixed_tiling(device, g, cout, product, widths);
  if (image_bytes + operand_bytes + result_bytes + work_bytes > kMaxTuningBytes) return fixed;
  Arena arena(device, MemoryUse::device, "conv tuning");
  BufferSlice image = arena.allocate(std::max<std::uint64_t>(image_bytes, 16), "image");
  BufferSlice operand = arena.allocate(std::max<std::uint64_t>(operand_bytes, 16), "operand");
  const BufferSlice result = arena.allocate(std::max<std::uint64_t>(result_bytes, 16), "result");
  const BufferSlice work = arena.allocate(std::max<std::uint64_t>(work_bytes, 16), "workspace");
  {
    Recording zero(device, {.name = "conv tuning operands"});
    for (const BufferSlice& s : {image, operand, result, work}) fill(zero, s, s.size / 4, 0.0f);
    zero.finish();
    zero.run();
  }
  image.f16 = widths.image_f16;
  operand.f16 = widths.operand_f16;
  const ProductShape shape = product_shape(g, cout, product);
  const std::vector<ConvTiling> candidates = tiling_candidates(device, widths);
  constexpr int kRuns = 3;  // back to back in each recording
  std::vector<std::unique_ptr<Recording>> recordings;
  for (const ConvTiling& t : candidates) {
    recordings.push_back(
        std::make_unique<Recording>(device, RecordingOptions{.name = "conv tuning", .timestamps = true}));
    for (int i = 0; i < kRuns; ++i)
      conv_gpu(*recordings.back(), {g, cout, product}, {{image, operand, result, work}}, t);
    recordings.back()->finish();
  }
  const std::vector<double> ns = interleaved_replay_ns(recordings);
  ConvTiling best = fixed;
  double best_ns = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    log_debug("{}: conv {}x{}x{} with {}: {:.1f} us", device.label(), shape.m, shape.cols, shape.k,
              candidates[i].name(), ns[i] / kRuns / 1000);
    if (best_ns == 0 || ns[i] < best_ns) best = candidates[i], best_ns = ns[i];
  }
  return best;
}

// The fixed rule where tuning is off, else the tiling kept for this shape class, measured
// now if no earlier run has.
ConvTiling chosen_tiling(Device& device, const ConvPush& g, std::uint32_t cout, ConvProduct product,
                         ConvWidths widths) {
  TuningCache& cache = device.kernels().tuning();
  if (!cache.enabled()) return fixed_tiling(device, g, cout, product, widths);
  const std::string key = conv_tuning_key(g, cout, product, widths);
  const std::unique_lock lock = cache.lock_measurement();
  if (const std::optional<std::string> kept = cache.get(key))
    for (const ConvTiling& t : tiling_candidates(device, widths))
      if (t.name() == *kept) return t;
  const ConvTiling best = measure_tiling(device, g, cout, product, widths);
  cache.put(key, best.name());
  log_info("{}: {} runs {} (measured; {})", device.label(), key, best.name(),
           cache.path().empty() ? "kept in memory" : cache.path());
  return best;
}

}  // namespace

std::uint64_t implicit_conv_gpu_workspace_bytes(const ConvPush& g, std::uint32_t cout, ConvProduct product,
                                                const Device& device) {
  return gpu_splits(g, cout, product, device).bytes();
}

void implicit_conv_gpu(Recording& recording, const ConvProblem& problem, const ConvRun& run) {
  const ConvTiling t = chosen_tiling(recording.device(), problem.geometry, problem.cout, problem.product,
                                     {run.slices.image.f16, run.slices.operand.f16});
  conv_gpu(recording, problem, run, t);
}

std::string conv_tuning_key(const ConvPush& g, std::uint32_t cout, ConvProduct product, ConvWidths widths) {
  const ProductShape shape = product_shape(g, cout, product);
  const char* names[] = {"forward", "filter_gradient", "input_gradient"};
  const char* width = widths.image_f16 && widths.operand_f16   ? " f16"
                      : widths.image_f16 || widths.operand_f16 ? " mixed"
                                                               : "";
  return fmt::format("conv_tiled {} m{} n{} k{}{}", names[static_cast<int>(product)], shape_bucket(shape.m),
                     shape_bucket(shape.cols), shape_bucket(shape.k), width);
}

std::vector<std::string> conv_tiling_names() {
  std::vector<std::string> names;
  for (const ConvTiling& t : kConvTilings) names.push_back(t.name());
  return names;
}

std::vector<std::string> conv_coopmat_tiling_names(const Device& device) {
  std::vector<std::string> names;
  if (has_matrix_units(device))
    for (const ConvTiling& t : kConvCoopTilings) names.push_back(t.name());
  return names;
}

}  // namespace vkp::vk
