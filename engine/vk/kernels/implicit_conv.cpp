#include "engine/vk/kernels/implicit_conv.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/error.h"
#include "engine/vk/kernels/copy.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/internal/conv_plan.h"
#include "engine/vk/kernels/reduce.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

constexpr std::uint64_t kAlign = 256;  // where each part of the workspace starts
std::uint64_t workspace_aligned(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

}  // namespace

ConvPackPush map_of(const ConvPush& g, std::uint32_t cout, ConvProduct product) {
  auto i = [](std::uint32_t v) { return static_cast<std::int32_t>(v); };
  ConvPackPush m{};
  if (product != ConvProduct::input_gradient)
    m = {g.n,
         g.h,
         g.w,
         g.c,
         g.oh,
         g.ow,
         g.kh,
         g.kw,
         g.stride_h,
         g.stride_w,
         i(g.dilation_h),
         i(g.dilation_w),
         i(g.pad_top),
         i(g.pad_left),
         g.groups,
         0,
         0,
         0,
         0,
         0};
  else
    m = {g.n,           g.oh,           g.ow, cout, g.h, g.w, g.kh, g.kw, 1, 1, -i(g.dilation_h), -i(g.dilation_w),
         -i(g.pad_top), -i(g.pad_left), 1,    0,    0,   0,   0,    0};
  return m;
}

std::uint64_t dw_elements(const ConvPush& g, std::uint32_t cout) {
  return std::uint64_t{g.kh} * g.kw * (g.c / g.groups) * cout;
}

PixelSplits pixel_splits(std::uint32_t k, std::uint64_t tiles, std::uint64_t workgroups, std::uint32_t granule,
                         std::uint64_t dw_size, const Device& device) {
  PixelSplits q;
  q.k_split = k;
  const std::uint64_t want = std::min<std::uint64_t>(div_up(workgroups, std::max<std::uint64_t>(tiles, 1)), k / 256);
  if (want <= 1) return q;
  q.k_split = div_up(div_up(k, want), granule) * granule;
  q.splits = div_up(k, q.k_split);
  if (q.splits == 1) return {.k_split = k};
  q.partial_bytes = workspace_aligned(q.splits * dw_size * 4);
  q.sums.axis = q.splits;
  q.sums.inner = static_cast<std::uint32_t>(dw_size);
  q.reduce_bytes = workspace_aligned(reduce_workspace_bytes(q.sums, device));
  return q;
}

namespace {

// w rearranged in the workspace: on CPU devices as gemm_regblock's X with rows along k
// (forward: w^T [cout][taps * cg]; input gradient: [c][taps * cout]), which it reads as
// vec4s; on GPUs, for the input gradient, w' [taps][cout][c] as conv_tiled's B.
std::uint64_t swapped_w_bytes(const ConvPush& g, std::uint32_t cout, ConvProduct product, bool cpu) {
  const bool swapped = cpu ? product != ConvProduct::filter_gradient : product == ConvProduct::input_gradient;
  return swapped ? workspace_aligned(dw_elements(g, cout) * 4) : 0;
}

void swap_w(Recording& recording, const ConvProblem& problem, bool cpu, const BufferSlice& w, const BufferSlice& to) {
  const ConvPush& g = problem.geometry;
  const std::uint32_t cout = problem.cout;
  const ConvProduct product = problem.product;
  const std::uint32_t taps = g.kh * g.kw, cg = g.c / g.groups;
  StridedCopy copy_args;
  if (!cpu && !w.f16) {  // w' [taps][cout][c]
    transpose(recording, {taps, g.c, cout}, w, to);
    return;
  }
  if (!cpu) {  // the same, float16 kept (transpose reads float32 only)
    copy_args.dims = {taps, cout, g.c};
    copy_args.src_strides = {g.c * cout, 1, cout};
    copy(recording, copy_args, w, to);
    return;
  }
  if (product == ConvProduct::forward) {  // w^T [cout][taps * cg]
    copy_args.dims = {cout, taps * cg};
    copy_args.src_strides = {1, cout};
  } else {  // [c][taps][cout]
    copy_args.dims = {g.c, taps, cout};
    copy_args.src_strides = {cout, g.c * cout, 1};
  }
  copy(recording, copy_args, w, to);
}

// --- CPU devices: conv_pack + gemm_regblock, chunk by chunk of pixels ---

// How the CPU path cuts a product: chunks of output pixels (of the map), each packed
// and multiplied on its own; the filter gradient's chunks are further split into
// partial sums (one group), all reduced at the end.
struct CpuPlan {
  ConvPush g{};
  std::uint32_t cout = 0;
  ConvProduct product = ConvProduct::forward;
  ConvPackPush map{};
  std::uint32_t pixels = 0, cols = 0;   // of the map: output pixels, patch columns per group
  std::uint32_t chunk = 0, chunks = 0;  // pixels per chunk (the last may have fewer)
  std::uint32_t partials = 1;           // filter gradient: partial sums in all
  std::uint64_t packed_bytes = 0;       // the largest chunk's packed patches
  std::uint64_t partial_bytes = 0, reduce_bytes = 0;
  bool along_k() const { return product == ConvProduct::filter_gradient; }
  std::uint64_t packing_bytes() const { return packed_bytes + partial_bytes + reduce_bytes; }  // conv_pack's path
};

// One chunk's GEMM: pixels [offset, offset + count) of the map, its first partial sum.
struct Chunk {
  std::uint32_t offset = 0, count = 0;
  std::uint32_t splits = 1;  // filter gradient of one group: partial sums of this chunk
  PanelGemm gemm;
  GemmPanels panels;
};

// Filter gradient of one group: partial sums of a chunk of `count` pixels, enough for
// about 16 workgroups (what gemm_regblock wants for a multi-core CPU) without shrinking
// its blocking; each of at least 256 pixels and dividing the chunk evenly, so that no
// split reads past dy.
std::uint32_t splits_of(const CpuPlan& plan, std::uint32_t count) {
  if (plan.g.groups != 1) return 1;
  const std::uint32_t blocks = div_up(plan.cout, 16) * div_up(plan.cols, 128);
  for (std::uint32_t s = std::min<std::uint32_t>(16, div_up(16, blocks)); s > 1; --s)
    if (count % s == 0 && count / s >= 256) return s;
  return 1;
}

Chunk chunk_of(const CpuPlan& plan, std::uint32_t index, std::uint32_t first_partial) {
  const ConvPush& g = plan.g;
  const std::uint32_t coutg = plan.cout / g.groups;
  Chunk c;
  c.offset = index * plan.chunk;
  c.count = std::min(plan.chunk, plan.pixels - c.offset);
  PanelGemm& m = c.gemm;
  m.batch = g.groups;
  m.x_row = 1;
  m.c_row = 1;
  switch (plan.product) {
    case ConvProduct::forward:  // out^T [coutg, count] = w^T [coutg, cols] . P^T (w^T swapped)
      m.m = coutg, m.n = c.count, m.k = plan.cols;
      m.x_row = plan.cols, m.x_k = 1, m.x_batch = coutg * plan.cols;
      m.c_col = plan.cout, m.c_batch = coutg, m.c_offset = c.offset * plan.cout;
      break;
    case ConvProduct::input_gradient:  // dx^T [c, count] = w'' [c, taps * cout] . P'^T (swapped)
      m.m = g.c, m.n = c.count, m.k = plan.cols;
      m.x_row = plan.cols, m.x_k = 1;
      m.c_col = g.c, m.c_offset = c.offset * g.c;
      break;
    case ConvProduct::filter_gradient: {  // dw^T [coutg, cols] = dy^T [coutg, count] . P, per split
      c.splits = splits_of(plan, c.count);
      const std::uint32_t w_elements = static_cast<std::uint32_t>(dw_elements(g, plan.cout));
      // X is dy^T read in place (transposing each chunk of dy first costs a dispatch and
      // a pass over dy for no measurable gain on lavapipe).
      m.m = coutg, m.n = plan.cols, m.k = c.count / c.splits;
      m.x_k = plan.cout, m.x_offset = c.offset * plan.cout;
      m.c_col = plan.cout;
      if (c.splits > 1) {  // batch s: pixels [s * k, (s + 1) * k) into partial sum first + s
        m.batch = c.splits;
        m.x_batch = m.k * plan.cout;
        m.c_batch = w_elements;
      } else {
        m.x_batch = coutg;
        m.c_batch = coutg;
      }
      m.c_offset = plan.partials > 1 ? first_partial * w_elements : 0;
      break;
    }
  }
  c.panels = gemm_panels(m);
  return c;
}

CpuPlan cpu_plan(const ConvPush& g, std::uint32_t cout, ConvProduct product, const Device& device) {
  CpuPlan plan;
  plan.g = g;
  plan.cout = cout;
  plan.product = product;
  plan.map = map_of(g, cout, product);
  plan.pixels = plan.map.n * plan.map.oh * plan.map.ow;
  plan.cols = plan.map.kh * plan.map.kw * (plan.map.c / plan.map.groups);
  // Packed floats per pixel: the patch columns padded to whole runs of 4 (pixels along
  // N) or to whole panels (pixels along K), for every group.
  plan.chunk = plan.pixels;
  plan.chunks = 1;
  const Chunk whole = chunk_of(plan, 0, 0);
  const std::uint64_t per_pixel =
      whole.panels.floats * whole.panels.batches * 4 / std::max<std::uint32_t>(1, plan.pixels);
  const std::uint32_t step = plan.along_k() ? 64 : whole.panels.width;  // chunks of whole panels or 64 pixels
  const std::uint64_t fit = kPackedChunkBytes / std::max<std::uint64_t>(1, per_pixel) / step * step;
  plan.chunk = static_cast<std::uint32_t>(std::clamp<std::uint64_t>(fit, step, std::max(plan.pixels, step)));
  plan.chunks = std::max<std::uint32_t>(1, div_up(plan.pixels, plan.chunk));
  if (plan.along_k()) {
    plan.partials = 0;
    for (std::uint32_t i = 0; i < plan.chunks; ++i) plan.partials += chunk_of(plan, i, 0).splits;
  }
  for (std::uint32_t i : {0u, plan.chunks - 1})
    plan.packed_bytes = std::max(plan.packed_bytes, workspace_aligned(chunk_of(plan, i, 0).panels.bytes()));
  if (plan.partials > 1) {
    plan.partial_bytes = workspace_aligned(std::uint64_t{plan.partials} * dw_elements(g, cout) * 4);
    ReduceArgs sums;
    sums.axis = plan.partials;
    sums.inner = static_cast<std::uint32_t>(dw_elements(g, cout));
    plan.reduce_bytes = workspace_aligned(reduce_workspace_bytes(sums, device));
  }
  return plan;
}

void implicit_conv_cpu(Recording& recording, const CpuPlan& plan, const ConvRun& run) {
  const BufferSlice &image = run.slices.image, &x_operand = run.slices.operand, &result = run.slices.result,
                    &workspace = run.slices.workspace;
  const std::uint64_t at = run.at;
  const GemmEpilogue& epilogue = run.epilogue;
  Device& device = recording.device();
  const BufferSlice packed = workspace.sub(at, plan.packed_bytes);
  const BufferSlice partials = plan.partials > 1 ? workspace.sub(at + plan.packed_bytes, plan.partial_bytes) : result;
  const bool vector = (plan.map.c / plan.map.groups) % 4 == 0 && image.offset % 16 == 0;
  std::uint32_t first_partial = 0;
  for (std::uint32_t i = 0; i < plan.chunks; ++i) {
    const Chunk c = chunk_of(plan, i, first_partial);
    ConvPackPush push = plan.map;
    const std::uint32_t panel_count = div_up(c.gemm.n, c.panels.width);
    push.dst_batch = static_cast<std::uint32_t>(c.panels.floats / 4);
    push.chunk = gemm_pack_chunk(c.panels, panel_count);
    push.k_split = plan.along_k() ? c.gemm.k : 0;
    push.pixel_offset = c.offset;
    push.pixel_count = c.count;
    const BufferSlice bindings[] = {image, packed};
    // The image's loads differ across the lanes: a texel buffer where it can be one.
    const Kernel& kernel = storage_kernel(
        device, {shaders::conv_pack, shaders::conv_pack_texel, shaders::conv_pack_f16, shaders::conv_pack_texel_f16},
        0b01, bindings, {{0, c.panels.width / 4}, {1, plan.along_k()}, {2, vector}}, 0b01);
    recording.dispatch(kernel, bindings, push, {div_up(c.panels.k_groups, push.chunk), panel_count, c.gemm.batch},
                       plan.along_k() ? "conv_pack_t" : "conv_pack");
    PanelGemm gemm = c.gemm;
    gemm.bias_row = 1;  // the run is the result transposed: its rows are channels
    gemm.bias_col = 0;
    gemm_packed(recording, gemm, c.panels, {x_operand, packed, plan.along_k() ? partials : result}, epilogue);
    first_partial += c.splits;
  }
  if (plan.partials > 1) {
    ReduceArgs sums;
    sums.axis = plan.partials;
    sums.inner = static_cast<std::uint32_t>(dw_elements(plan.g, plan.cout));
    reduce(recording, sums, partials, result,
           workspace.sub(at + plan.packed_bytes + plan.partial_bytes, plan.reduce_bytes));
  }
}

// --- CPU devices, the image read in place: conv_regblock ---

// A strided convolution's input gradient: conv_regblock's phases or masked taps.
bool strided_input_gradient(const CpuPlan& plan) {
  return plan.product == ConvProduct::input_gradient && (plan.g.stride_h > 1 || plan.g.stride_w > 1);
}

// Whether conv_regblock runs this product: a CPU device, one group, and for the filter
// gradient the rows of C in runs of 4 (it reads dy as vec4s of 4 output channels). The
// image and operand are read through texel buffers where both can be (storage_kernel's
// _texel builds), else as storage buffers (VKPACK_TEXEL_BUFFERS=0, an unaligned slice).
// Channels not in runs of 4 are read one at a time (kScalar), but not in a strided input
// gradient: kScalar's stepping knows neither phases nor masks, so there dy's channels
// (cout) must be in runs of 4.
bool in_place_shape(const CpuPlan& plan, const Device& device) {
  const bool dy_in_fours = plan.along_k() || strided_input_gradient(plan);
  return device.kind() == DeviceKind::cpu && plan.g.groups == 1 && (!dy_in_fours || plan.cout % 4 == 0);
}

// conv_regblock's product: C = X . P^T (m x n, K = k) and its blocking; the filter
// gradient's pixels in splits for about 16 workgroups in all.
struct InPlacePlan {
  std::uint32_t m = 0, n = 0, k = 0;
  GemmPanels blocking;
  PixelSplits split;  // one split but for the filter gradient
};

InPlacePlan in_place_plan(const CpuPlan& plan, const Device& device) {
  InPlacePlan q;
  const bool along_k = plan.along_k();
  q.m = plan.product == ConvProduct::input_gradient ? plan.g.c : plan.cout;
  q.n = along_k ? plan.cols : plan.pixels;
  q.k = along_k ? plan.pixels : plan.cols;
  // gemm_regblock's blocking (nothing is packed: n and k are capped only to keep
  // gemm_panels' packed-size check out of the way); the filter gradient splits K
  // rather than shrink its blocks, so it asks as for a batch of 16.
  PanelGemm shape;
  shape.m = q.m;
  shape.n = std::min<std::uint32_t>(q.n, 1u << 16);
  shape.k = 4;
  shape.batch = along_k ? 16 : 1;
  q.blocking = gemm_panels(shape);
  const std::uint64_t tiles = std::uint64_t{div_up(q.m, q.blocking.rows)} * div_up(q.n, q.blocking.width);
  q.split =
      along_k ? pixel_splits(q.k, tiles, 16, 1, dw_elements(plan.g, plan.cout), device) : PixelSplits{.k_split = q.k};
  return q;
}

// A strided input gradient's dispatches, one a phase: the output pixels (y, x) with
// y % stride_h == py and x % stride_w == px, each with only the taps that reach them.
void dispatch_phases(Recording& recording, const Kernel& kernel, std::span<const BufferSlice> bindings,
                     const ConvRegblockPush& push, const CpuPlan& plan, const InPlacePlan& q) {
  const ConvPush& g = plan.g;
  for (std::uint32_t py = 0; py < g.stride_h; ++py)
    for (std::uint32_t px = 0; px < g.stride_w; ++px) {
      ConvRegblockPush phase = push;
      phase.phase_h = py < g.h ? div_up(g.h - py, g.stride_h) : 0;
      phase.phase_w = px < g.w ? div_up(g.w - px, g.stride_w) : 0;
      phase.n = g.n * phase.phase_h * phase.phase_w;
      if (phase.n == 0) continue;
      phase.phase_y = py, phase.phase_x = px;
      // The taps i with (y + pad - i) a multiple of the stride for every y of the phase.
      phase.tap_y = (py + g.pad_top) % g.stride_h, phase.tap_x = (px + g.pad_left) % g.stride_w;
      const std::uint32_t taps_h = phase.tap_y < g.kh ? div_up(g.kh - phase.tap_y, g.stride_h) : 0;
      phase.kw = phase.tap_x < g.kw ? div_up(g.kw - phase.tap_x, g.stride_w) : 0;
      phase.k = taps_h * phase.kw * plan.map.c;
      phase.taps_w = g.kw, phase.a_row = q.k;
      phase.dilation_h = -1, phase.dilation_w = -1;
      recording.dispatch(kernel, bindings, phase, {div_up(phase.n, q.blocking.width), div_up(q.m, q.blocking.rows), 1},
                         "conv_regblock");
    }
}

void conv_regblock(Recording& recording, const CpuPlan& plan, const ConvRun& run) {
  const BufferSlice &image = run.slices.image, &x_operand = run.slices.operand, &result = run.slices.result,
                    &workspace = run.slices.workspace;
  const std::uint64_t at = run.at;
  const GemmEpilogue& epilogue = run.epilogue;
  Device& device = recording.device();
  const ConvPackPush& map = plan.map;
  const InPlacePlan q = in_place_plan(plan, device);
  const PixelSplits& split = q.split;
  const BufferSlice partials = split.splits > 1 ? workspace.sub(at, split.partial_bytes) : result;
  ConvRegblockPush push{};
  push.m = q.m, push.n = q.n, push.k = q.k;
  push.h = map.h, push.w = map.w, push.c = map.c, push.oh = map.oh, push.ow = map.ow, push.kw = map.kw;
  push.stride_h = map.stride_h, push.stride_w = map.stride_w;
  push.dilation_h = map.dilation_h, push.dilation_w = map.dilation_w;
  push.pad_top = map.pad_top, push.pad_left = map.pad_left;
  push.bias_row = 1;  // C's rows are the channels the bias runs along
  push.act_alpha = epilogue.activation_alpha, push.gate_alpha = epilogue.gate_alpha;
  push.k_split = split.k_split;
  const ConvPush& g = plan.g;
  const bool input_gradient = plan.product == ConvProduct::input_gradient;
  // A strided input gradient of dilation 1 runs phase by phase, each with only the taps
  // that reach it; with dilation, every tap masked.
  const bool phases = input_gradient && (g.stride_h > 1 || g.stride_w > 1) && g.dilation_h == 1 && g.dilation_w == 1;
  std::vector<SpecConstant> constants = {{0, q.blocking.width / 4 / q.blocking.cols},
                                         {1, q.blocking.rows},
                                         {2, q.blocking.cols},
                                         {3, plan.along_k()},
                                         {4, input_gradient ? plan.g.stride_h : 1},
                                         {5, input_gradient ? plan.g.stride_w : 1},
                                         {6, phases},
                                         {7, map.c % 4 != 0}};
  add_gemm_epilogue_constants(constants, epilogue);
  const BufferSlice bindings[] = {x_operand, image, partials, epilogue_bias_binding(epilogue, image),
                                  epilogue_extra_binding(epilogue, image)};
  const Kernel& kernel = storage_kernel(device,
                                        {shaders::conv_regblock, shaders::conv_regblock_texel,
                                         shaders::conv_regblock_f16, shaders::conv_regblock_texel_f16},
                                        0b00011, bindings, std::move(constants));
  if (!phases)
    recording.dispatch(kernel, bindings, push,
                       {div_up(q.n, q.blocking.width), div_up(q.m, q.blocking.rows), split.splits}, "conv_regblock");
  if (phases) dispatch_phases(recording, kernel, bindings, push, plan, q);
  if (split.splits > 1)
    reduce(recording, split.sums, partials, result, workspace.sub(at + split.partial_bytes, split.reduce_bytes));
}

}  // namespace

bool implicit_conv_supports(const ConvPush& g, ConvProduct product) {
  return product != ConvProduct::input_gradient || (g.groups == 1 && g.stride_h == 1 && g.stride_w == 1);
}

bool implicit_conv_supports(const ConvPush& g, std::uint32_t cout, ConvProduct product, const Device& device) {
  // The strided input gradient: conv_regblock's phases or masked taps (in_place_shape
  // asks cout in runs of 4).
  return implicit_conv_supports(g, product) || in_place_shape(cpu_plan(g, cout, product, device), device);
}

std::uint64_t implicit_conv_workspace_bytes(const ConvPush& geometry, std::uint32_t cout, ConvProduct product,
                                            const Device& device, KernelChoice choice) {
  const bool cpu = resolve(choice, device) == DeviceKind::cpu;
  const std::uint64_t swapped = swapped_w_bytes(geometry, cout, product, cpu);
  if (!cpu) return swapped + implicit_conv_gpu_workspace_bytes(geometry, cout, product, device);
  // conv_regblock's room (its partial sums) where it runs; else conv_pack's packed patches.
  const CpuPlan plan = cpu_plan(geometry, cout, product, device);
  return swapped + (in_place_shape(plan, device) ? in_place_plan(plan, device).split.bytes() : plan.packing_bytes());
}

void implicit_conv(Recording& recording, const ConvProblem& problem, const ConvSlices& slices, KernelChoice choice,
                   const GemmEpilogue& epilogue) {
  const ConvPush& g = problem.geometry;
  const std::uint32_t cout = problem.cout;
  const ConvProduct product = problem.product;
  const BufferSlice &image = slices.image, &operand = slices.operand, &result = slices.result,
                    &workspace = slices.workspace;
  const bool cpu_in_place = resolve(choice, recording.device()) == DeviceKind::cpu &&
                            implicit_conv_supports(g, cout, product, recording.device());
  if (!implicit_conv_supports(g, product) && !cpu_in_place)
    throw Error(ErrorCode::unsupported,
                "implicit_conv: the input gradient needs one group and stride 1, or a CPU device (conv_regblock), one "
                "group and cout a multiple of 4");
  if (!epilogue.empty() && (g.groups != 1 || product == ConvProduct::filter_gradient))
    throw Error(ErrorCode::unsupported, "implicit_conv: an epilogue needs one group and not the filter gradient");
  const std::uint64_t x_size = std::uint64_t{g.n} * g.h * g.w * g.c, dy_size = std::uint64_t{g.n} * g.oh * g.ow * cout;
  const std::uint64_t w_size = dw_elements(g, cout);
  const bool backward_input = product == ConvProduct::input_gradient;
  require_elements(image, backward_input ? dy_size : x_size, "implicit_conv", backward_input ? "dy" : "x");
  require_elements(operand, product == ConvProduct::filter_gradient ? dy_size : w_size, "implicit_conv",
                   product == ConvProduct::filter_gradient ? "dy" : "w");
  const std::uint64_t result_size = product == ConvProduct::forward ? dy_size : backward_input ? x_size : w_size;
  require_elements(result, result_size, "implicit_conv", "the result");
  check_gemm_epilogue(epilogue, backward_input ? g.c : cout, result_size);
  Device& device = recording.device();
  const std::uint64_t need = implicit_conv_workspace_bytes(g, cout, product, device, choice);
  if (workspace.size < need)
    throw Error(ErrorCode::invalid_argument, "implicit_conv: workspace of " + std::to_string(workspace.size) +
                                                 " bytes, needs " + std::to_string(need));
  if (result_size == 0) return;
  const bool cpu = resolve(choice, device) == DeviceKind::cpu;
  BufferSlice x_operand = operand;
  const std::uint64_t swapped = swapped_w_bytes(g, cout, product, cpu);
  if (swapped > 0) {
    x_operand = workspace.sub(0, w_size * 4);
    x_operand.f16 = !cpu && operand.f16;  // w' keeps w's width on GPUs (conv_coopmat reads it)
    swap_w(recording, problem, cpu, operand, x_operand);
  }
  const ConvRun run{{image, x_operand, result, workspace}, swapped, epilogue};
  if (!cpu) return implicit_conv_gpu(recording, problem, run);
  const CpuPlan plan = cpu_plan(g, cout, product, device);
  if (in_place_shape(plan, device))
    conv_regblock(recording, plan, run);
  else
    implicit_conv_cpu(recording, plan, run);
}

}  // namespace vkp::vk
