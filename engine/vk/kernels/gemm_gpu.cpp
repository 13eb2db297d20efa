// GEMM's GPU path: gemm_tiled's tilings and gemm_coopmat's on the matrix units
// (vk::GemmVariant), and the variant measured fastest per device and shape class
// (TuningCache). gemm.cpp holds the checks, the CPU path and the dispatch between them.
#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <memory>

#include "core/error.h"
#include "core/log.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/internal/gemm_layout.h"
#include "engine/vk/memory.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

// gemm_tiled's tiles and blocks per variant.
struct Tiling {
  std::uint32_t tile_m, tile_n, tile_k, micro_m, micro_n;
  std::uint32_t run;  // adjacent rows (columns) of the block (shaders/gemm_tiled.comp's kRun)
};
// gemm_coopmat's subgroups and fragments per variant (shaders/gemm_coopmat.comp).
struct CoopTiling {
  std::uint32_t subgroups_m, subgroups_n, frags_m, frags_n, tile_k;
  std::uint32_t tile_m() const { return subgroups_m * frags_m * 16; }
  std::uint32_t tile_n() const { return subgroups_n * frags_n * 16; }
  std::uint32_t subgroups() const { return subgroups_m * subgroups_n; }
  // gemm_coopmat's shared arrays, for either transpose: each operand's tile in rows of
  // 16-byte runs with one run of padding, and a 16 x 16 float scratch per subgroup.
  std::uint32_t shared_bytes() const {
    const auto tile = [&](std::uint32_t outer) { return std::max(outer * (tile_k / 8 + 1), tile_k * (outer / 8 + 1)); };
    return 16 * (tile(tile_m()) + tile(tile_n())) + subgroups() * 16 * 16 * 4;
  }
};

Tiling tiling_of(GemmVariant variant) {
  switch (variant) {
    case GemmVariant::tiled_128: return {128, 128, 8, 8, 8, 4};
    case GemmVariant::tiled_128x64: return {128, 64, 16, 8, 4, 1};
    case GemmVariant::tiled_128_k16: return {128, 128, 16, 8, 8, 4};
    default: return {64, 64, 16, 4, 4, 4};
  }
}

CoopTiling coop_tiling_of(GemmVariant variant) {
  switch (variant) {
    case GemmVariant::cooperative_matrix_wide: return {2, 4, 4, 4, 32};
    case GemmVariant::cooperative_matrix_64: return {2, 2, 2, 2, 32};
    case GemmVariant::cooperative_matrix_k64: return {2, 4, 4, 2, 64};
    case GemmVariant::cooperative_matrix_4sg: return {2, 2, 4, 4, 32};
    default: return {2, 4, 4, 2, 32};
  }
}

constexpr GemmVariant kAllGpuVariants[] = {GemmVariant::tiled_64,
                                           GemmVariant::tiled_128,
                                           GemmVariant::tiled_128x64,
                                           GemmVariant::tiled_128_k16,
                                           GemmVariant::cooperative_matrix,
                                           GemmVariant::cooperative_matrix_wide,
                                           GemmVariant::cooperative_matrix_64,
                                           GemmVariant::cooperative_matrix_k64,
                                           GemmVariant::cooperative_matrix_4sg};

bool subgroup_size_fixed(const Device& device) {
  const DeviceLimits& l = device.limits();
  return l.min_subgroup_size == l.max_subgroup_size && l.subgroup_size == l.min_subgroup_size;
}

// --- Measured choice (TuningCache) ---

// Operands larger than this are not copied for a measurement: the fixed rule decides.
constexpr std::uint64_t kMaxTuningBytes = std::uint64_t{1} << 30;

// `runs` back-to-back products of this variant, on scratch operands of the caller's
// shapes, strides and widths (zeros, so nothing is denormal), recorded for timing.
constexpr int kRuns = 3;
std::unique_ptr<Recording> record_variant(Device& device, GemmArgs args, GemmVariant variant, const BufferSlice& a,
                                          const BufferSlice& b, const BufferSlice& c) {
  args.variant = variant;
  auto recording = std::make_unique<Recording>(device, RecordingOptions{.name = "gemm tuning", .timestamps = true});
  for (int i = 0; i < kRuns; ++i) gemm(*recording, args, {a, b, c, BufferSlice{}});
  recording->finish();
  return recording;
}

// The variants to measure, and the one kept where the operands are too large to measure.
struct Candidates {
  const std::vector<GemmVariant>& variants;
  GemmVariant fixed;
};

GemmVariant measure_variant(Device& device, const GemmArgs& args, const GemmLayout& l, const BufferSlice& a,
                            const BufferSlice& b, const Candidates& choice) {
  const auto& [candidates, fixed] = choice;
  const std::uint32_t a_rows = args.trans_a ? args.k : args.m, a_cols = args.trans_a ? args.m : args.k;
  const std::uint32_t b_rows = args.trans_b ? args.n : args.k, b_cols = args.trans_b ? args.k : args.n;
  const std::uint64_t a_bytes = gemm_extent(a_rows, a_cols, l.lda, args.batch, l.stride_a) * (a.f16 ? 2 : 4);
  const std::uint64_t b_bytes = gemm_extent(b_rows, b_cols, l.ldb, args.batch, l.stride_b) * (b.f16 ? 2 : 4);
  const std::uint64_t c_bytes = gemm_extent(args.m, args.n, l.ldc, args.batch, l.stride_c) * 4;
  if (a_bytes + b_bytes + c_bytes > kMaxTuningBytes) return fixed;
  Arena arena(device, MemoryUse::device, "gemm tuning");
  BufferSlice ta = arena.allocate(std::max<std::uint64_t>(a_bytes, 16), "A");
  BufferSlice tb = arena.allocate(std::max<std::uint64_t>(b_bytes, 16), "B");
  const BufferSlice tc = arena.allocate(std::max<std::uint64_t>(c_bytes, 16), "C");
  {
    Recording zero(device, {.name = "gemm tuning operands"});
    fill(zero, ta, ta.size / 4, 0.0f);
    fill(zero, tb, tb.size / 4, 0.0f);
    fill(zero, tc, tc.size / 4, 0.0f);
    zero.finish();
    zero.run();
  }
  ta.f16 = a.f16;
  tb.f16 = b.f16;
  std::vector<std::unique_ptr<Recording>> recordings;
  for (GemmVariant v : candidates) recordings.push_back(record_variant(device, args, v, ta, tb, tc));
  const std::vector<double> ns = interleaved_replay_ns(recordings);
  GemmVariant best = fixed;
  double best_ns = 0;
  for (std::size_t i = 0; i < candidates.size(); ++i) {
    log_debug("{}: gemm {}x{}x{} (batch {}) with {}: {:.1f} us", device.label(), args.m, args.n, args.k, args.batch,
              to_string(candidates[i]), ns[i] / kRuns / 1000);
    if (best_ns == 0 || ns[i] < best_ns) best = candidates[i], best_ns = ns[i];
  }
  return best;
}

// The variant for GemmVariant::automatic: the fixed rule (gemm_variant_for) where tuning
// is off or only one variant qualifies, else the one measured fastest for this shape
// class on this device, measured now if no earlier run has.
GemmVariant chosen_variant(const GemmArgs& args, const GemmLayout& l, const BufferSlice& a, const BufferSlice& b,
                           Device& device) {
  const GemmVariant fixed = gemm_variant_for(args, a, b, device);
  TuningCache& cache = device.kernels().tuning();
  if (args.variant != GemmVariant::automatic || !cache.enabled()) return fixed;
  std::vector<GemmVariant> candidates = gemm_tuning_candidates(a, b, device);
  if (candidates.size() < 2) return fixed;
  const std::string key = gemm_tuning_key(args, a, b);
  const std::unique_lock lock = cache.lock_measurement();
  if (const std::optional<std::string> kept = cache.get(key))
    for (GemmVariant v : candidates)
      if (to_string(v) == *kept) return v;
  const GemmVariant best = measure_variant(device, args, l, a, b, {candidates, fixed});
  cache.put(key, std::string(to_string(best)));
  log_info("{}: {} runs {} (measured; {})", device.label(), key, to_string(best),
           cache.path().empty() ? "kept in memory" : cache.path());
  return best;
}

}  // namespace

void gemm_gpu(Recording& recording, const GemmArgs& args, const GemmLayout& l, const GemmSlices& slices,
              const GemmEpilogue& epilogue) {
  const BufferSlice &a = slices.a, &b = slices.b, &c = slices.c;
  const GemmTiledPush push{args.m,
                           args.n,
                           args.k,
                           l.lda,
                           l.ldb,
                           l.ldc,
                           l.stride_a,
                           l.stride_b,
                           l.stride_c,
                           args.alpha,
                           args.beta,
                           0,
                           1,
                           epilogue.activation_alpha,
                           epilogue.gate_alpha};
  Device& device = recording.device();
  const GemmVariant variant = chosen_variant(args, l, a, b, device);
  const BufferSlice bindings[] = {a, b, c, epilogue_bias_binding(epilogue, a), epilogue_extra_binding(epilogue, a)};
  if (on_matrix_units(variant)) {
    // Runs of 8 along each operand's contiguous axis read as 16-byte loads (float16) or
    // two (float32) where every run starts at such a boundary.
    const auto whole_runs = [&](const BufferSlice& x, std::uint32_t ld, std::uint32_t stride) {
      const std::uint32_t unit = x.f16 ? 8 : 4;
      return ld % unit == 0 && (args.batch == 1 || stride % unit == 0);
    };
    const CoopTiling t = coop_tiling_of(variant);
    const std::uint32_t subgroup = device.limits().subgroup_size;
    std::vector<SpecConstant> constants = {{0, t.subgroups() * subgroup},
                                           {6, args.trans_a},
                                           {7, args.trans_b},
                                           {8, whole_runs(a, l.lda, l.stride_a)},
                                           {9, whole_runs(b, l.ldb, l.stride_b)},
                                           {10, t.subgroups_m},
                                           {11, t.subgroups_n},
                                           {12, t.frags_m},
                                           {13, t.frags_n},
                                           {14, t.tile_k},
                                           {15, subgroup}};
    add_gemm_epilogue_constants(constants, epilogue);
    constants.push_back({kF16BindingsId, f16_mask(bindings)});
    const Kernel& kernel = device.kernel(shaders::gemm_coopmat, std::move(constants));
    recording.dispatch(kernel, bindings, push, {div_up(args.n, t.tile_n()), div_up(args.m, t.tile_m()), args.batch},
                       "gemm_coopmat");
    return;
  }
  const Tiling t = tiling_of(variant);
  const std::uint32_t threads = (t.tile_m / t.micro_m) * (t.tile_n / t.micro_n);
  std::vector<SpecConstant> constants = {{0, threads},      {1, t.tile_m},     {2, t.tile_n},
                                         {3, t.tile_k},     {4, t.micro_m},    {5, t.micro_n},
                                         {6, args.trans_a}, {7, args.trans_b}, {8, t.run}};
  add_gemm_epilogue_constants(constants, epilogue);
  const Kernel& kernel =
      storage_kernel(device, shaders::gemm_tiled, shaders::gemm_tiled_f16, bindings, std::move(constants));
  recording.dispatch(kernel, bindings, push, {div_up(args.n, t.tile_n), div_up(args.m, t.tile_m), args.batch}, "gemm");
}

std::string_view to_string(GemmVariant variant) {
  switch (variant) {
    case GemmVariant::automatic: return "automatic";
    case GemmVariant::tiled_64: return "tiled_64";
    case GemmVariant::tiled_128: return "tiled_128";
    case GemmVariant::tiled_128x64: return "tiled_128x64";
    case GemmVariant::cooperative_matrix: return "cooperative_matrix";
    case GemmVariant::cooperative_matrix_wide: return "cooperative_matrix_wide";
    case GemmVariant::cooperative_matrix_64: return "cooperative_matrix_64";
    case GemmVariant::tiled_128_k16: return "tiled_128_k16";
    case GemmVariant::cooperative_matrix_k64: return "cooperative_matrix_k64";
    case GemmVariant::cooperative_matrix_4sg: return "cooperative_matrix_4sg";
  }
  return "?";
}

bool on_matrix_units(GemmVariant variant) {
  return variant == GemmVariant::cooperative_matrix || variant == GemmVariant::cooperative_matrix_wide ||
         variant == GemmVariant::cooperative_matrix_64 || variant == GemmVariant::cooperative_matrix_k64 ||
         variant == GemmVariant::cooperative_matrix_4sg;
}

bool has_matrix_units(const Device& device) {
  return device.has_matrix_shape(16, 16, 16) && subgroup_size_fixed(device);
}

std::vector<GemmVariant> gemm_gpu_variants(const Device& device) {
  const bool units = has_matrix_units(device);
  std::vector<GemmVariant> variants;
  for (GemmVariant v : kAllGpuVariants) {
    if (!on_matrix_units(v))
      variants.push_back(v);
    else if (units &&
             coop_tiling_of(v).subgroups() * device.limits().subgroup_size <=
                 device.limits().max_workgroup_invocations &&
             coop_tiling_of(v).shared_bytes() <= device.limits().max_shared_memory_bytes)
      variants.push_back(v);
  }
  return variants;
}

GemmVariant gemm_variant_for(const GemmArgs& args, const BufferSlice& a, const BufferSlice& b, const Device& device) {
  const std::vector<GemmVariant> offered = gemm_gpu_variants(device);
  const auto has = [&](GemmVariant v) { return std::find(offered.begin(), offered.end(), v) != offered.end(); };
  if (args.variant != GemmVariant::automatic) {
    if (!has(args.variant))
      throw Error(ErrorCode::unsupported,
                  fmt::format("gemm: {} cannot run {} (it needs VK_NV_cooperative_matrix with 16x16x16 float16 "
                              "products into float32, enabled, a fixed subgroup size and room for its workgroup)",
                              device.label(), to_string(args.variant)));
    return args.variant;
  }
  if (a.f16 && b.f16 && has(GemmVariant::cooperative_matrix)) return GemmVariant::cooperative_matrix;
  return GemmVariant::tiled_64;
}

std::vector<GemmVariant> gemm_tuning_candidates(const BufferSlice& a, const BufferSlice& b, const Device& device) {
  std::vector<GemmVariant> candidates;
  for (GemmVariant v : gemm_gpu_variants(device))
    if (!on_matrix_units(v) || (a.f16 && b.f16)) candidates.push_back(v);
  return candidates;
}

std::string gemm_tuning_key(const GemmArgs& args, const BufferSlice& a, const BufferSlice& b) {
  return fmt::format("gemm m{} n{} k{}{}{}{}{}", shape_bucket(args.m), shape_bucket(args.n), shape_bucket(args.k),
                     args.trans_a ? " At" : "", args.trans_b ? " Bt" : "", args.batch > 1 ? " batched" : "",
                     a.f16 && b.f16   ? " f16"
                     : a.f16 || b.f16 ? " mixed"
                                      : "");
}

}  // namespace vkp::vk
