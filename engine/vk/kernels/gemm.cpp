#include "engine/vk/kernels/gemm.h"

#include <fmt/format.h>

#include <algorithm>

#include "core/error.h"
#include "engine/vk/kernels/internal/gemm_layout.h"
#include "engine/vk/kernels/reduce.h"
#include "shaders/embedded.h"

namespace vkp::vk {
namespace {

// gemm_regblock: invocations per workgroup (one SIMD vector on lavapipe's AVX2 path)
// and the fewest workgroups worth keeping a multi-core CPU busy.
constexpr std::uint32_t kLanes = 8, kMinWorkgroups = 16;

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

}  // namespace

GemmLayout gemm_layout(const GemmArgs& args) {
  const std::uint32_t a_rows = args.trans_a ? args.k : args.m, a_cols = args.trans_a ? args.m : args.k;
  const std::uint32_t b_rows = args.trans_b ? args.n : args.k, b_cols = args.trans_b ? args.k : args.n;
  GemmLayout l{};
  l.lda = args.lda.value_or(a_cols);
  l.ldb = args.ldb.value_or(b_cols);
  l.ldc = args.ldc.value_or(args.n);
  l.stride_a = args.stride_a.value_or(a_rows * l.lda);
  l.stride_b = args.stride_b.value_or(b_rows * l.ldb);
  l.stride_c = args.stride_c.value_or(args.m * l.ldc);
  if (l.lda < a_cols || l.ldb < b_cols || l.ldc < args.n)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: row strides lda={} ldb={} ldc={} are shorter than the rows ({}, {}, {})", l.lda,
                            l.ldb, l.ldc, a_cols, b_cols, args.n));
  return l;
}

std::uint64_t gemm_extent(std::uint32_t rows, std::uint32_t cols, std::uint32_t ld, std::uint32_t batch,
                          std::uint32_t stride) {
  if (rows == 0 || cols == 0 || batch == 0) return 0;
  return std::uint64_t{batch - 1} * stride + std::uint64_t{rows - 1} * ld + cols;
}

void add_gemm_epilogue_constants(std::vector<SpecConstant>& constants, const GemmEpilogue& e) {
  constants.push_back({20, e.bias.size > 0 ? 1u : 0u});
  constants.push_back({21, e.residual.size > 0 ? 1u : 0u});
  constants.push_back({22, e.activation ? 1 + static_cast<std::uint32_t>(*e.activation) : 0u});
  constants.push_back({23, e.gate_fn ? 1 + static_cast<std::uint32_t>(*e.gate_fn) : 0u});
}

BufferSlice epilogue_bias_binding(const GemmEpilogue& e, const BufferSlice& dummy) {
  return e.bias.size > 0 ? e.bias : dummy;
}

BufferSlice epilogue_extra_binding(const GemmEpilogue& e, const BufferSlice& dummy) {
  return e.residual.size > 0 ? e.residual : e.gate.size > 0 ? e.gate : dummy;
}

void check_gemm_epilogue(const GemmEpilogue& e, std::uint64_t n, std::uint64_t c_extent) {
  if (e.bias.size > 0) require_elements(e.bias, n, "gemm", "the epilogue's bias");
  if (e.residual.size > 0) require_elements(e.residual, c_extent, "gemm", "the epilogue's residual");
  if (e.gate.size > 0) require_elements(e.gate, c_extent, "gemm", "the epilogue's gate");
  if (e.residual.size > 0 && (e.gate.size > 0 || e.gate_fn))
    throw Error(ErrorCode::invalid_argument, "gemm: an epilogue takes a residual or a gate, not both");
  if (e.gate_fn.has_value() != (e.gate.size > 0))
    throw Error(ErrorCode::invalid_argument, "gemm: an epilogue's gate needs both its tensor and its function");
  if (e.activation && *e.activation != UnaryOp::relu && *e.activation != UnaryOp::sigmoid &&
      *e.activation != UnaryOp::tanh && *e.activation != UnaryOp::leaky_relu && *e.activation != UnaryOp::elu &&
      *e.activation != UnaryOp::gelu)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: the epilogue does not apply {}", to_string(*e.activation)));
  if (e.gate_fn && *e.gate_fn != BinaryOp::relu_grad && *e.gate_fn != BinaryOp::sigmoid_grad &&
      *e.gate_fn != BinaryOp::tanh_grad && *e.gate_fn != BinaryOp::leaky_relu_grad &&
      *e.gate_fn != BinaryOp::elu_grad && *e.gate_fn != BinaryOp::gelu_grad)
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: the epilogue does not gate by {}", to_string(*e.gate_fn)));
}

namespace {

// Relative cost of a blocking, per multiply-add it performs (padding included): each
// group of 4 k loads `rows` vec4s of X (4 scalar fetches each where X's rows are not
// 16-byte aligned runs along k: `x_vec4` false) and 4 * cols vec4s of Y for rows * cols
// * 4 vec4 multiply-adds, so narrow blocks spend more on loads. Fitted to
// vkpack_bench_kernels on lavapipe with both operands texel buffers: at 1024^3 16 x 2
// runs at 0.63 of 16 x 4, 16 x 1 at 0.5, 8 x 4 at 0.86; 12544x64x800 and 800x64x12544
// ran 1.5-1.6x faster in the orientation whose X is read as vec4s. Only the orientation
// weighs x_vec4: choosing the blocking by it too slowed the convolutions' products
// (convnet step 239 -> 376 ms), so the blocking is chosen as for a vec4 X.
double block_cost(std::uint32_t rows, std::uint32_t cols, bool x_vec4) {
  return (1.0 + (x_vec4 ? 1.0 : 4.0) / cols) * (1.0 + 4.0 / rows);
}
// Packing one float costs about as much as this many multiply-adds of the kernel.
constexpr double kPackCost = 6.0;

std::uint32_t width_of(std::uint32_t cols) { return kLanes * 4 * cols; }

// The cheapest blocking of an m x n product (before the workgroup count is considered).
GemmPanels blocking_for(std::uint32_t m, std::uint32_t n, bool x_vec4) {
  GemmPanels p;
  p.rows = m <= 4 ? 4 : m <= 8 ? 8 : 16;
  double least = 0;
  for (std::uint32_t cols = 1; cols <= 4; ++cols) {
    const double padded_n = static_cast<double>(div_up(n, width_of(cols))) * width_of(cols);
    const double cost = padded_n * block_cost(p.rows, cols, x_vec4);
    if (cols == 1 || cost < least) {
      least = cost;
      p.cols = cols;
    }
  }
  p.width = width_of(p.cols);
  return p;
}

// One orientation of a product as the CPU path would run it: m x n x k in `batch`
// products, Y packed for `packed_batches` of them, X read as vec4s or not.
struct Orientation {
  std::uint32_t m, n, k, batch, packed_batches;
  bool x_vec4;
};

double cost_of(const GemmPanels& p, const Orientation& o) {
  const auto [m, n, k, batch, packed_batches, x_vec4] = o;
  const double padded_m = static_cast<double>(div_up(m, p.rows)) * p.rows;
  const double padded_n = static_cast<double>(div_up(n, p.width)) * p.width;
  const double padded_k = static_cast<double>(div_up(k, 4)) * 4;
  return padded_m * padded_n * padded_k * batch * block_cost(p.rows, p.cols, x_vec4) +
         kPackCost * padded_n * padded_k * packed_batches;
}

// Y = op(B), or op(A)^T when transposed, as the multiply reads it: element strides
// along its columns and along k, and between the batches it runs (0: one Y for all).
struct YLayout {
  std::uint32_t n, k, batch;
};

YLayout y_layout(const GemmArgs& args, const GemmLayout& l, bool transposed) {
  YLayout y{};
  y.n = transposed ? (args.trans_a ? 1 : l.lda) : (args.trans_b ? l.ldb : 1);
  y.k = transposed ? (args.trans_a ? l.lda : 1) : (args.trans_b ? 1 : l.ldb);
  y.batch = transposed ? l.stride_a : l.stride_b;
  return y;
}

// The orientation a GemmArgs runs in: C = X . Y with X = op(A), Y = op(B) or, when C
// is narrow, X = op(B)^T, Y = op(A)^T and C written transposed. Packing is charged
// only to an orientation whose Y cannot be read in place (slices taken as 16-byte
// aligned, as the arena places them).
bool transposes(const GemmArgs& args, const GemmLayout& l) {
  auto packed_batches = [&](bool transposed) -> std::uint32_t {
    const YLayout y = y_layout(args, l, transposed);
    if (gemm_y_in_place(BufferSlice{}, transposed ? args.m : args.n, y.n, y.k, y.batch) != 0) return 0;
    return y.batch == 0 ? 1 : args.batch;
  };
  // X = op(A), or op(B)^T transposed, read as vec4s: its rows run along k, 16-byte aligned.
  auto x_vec4 = [&](bool transposed) {
    const std::uint32_t x_k = transposed ? (args.trans_b ? 1 : l.ldb) : (args.trans_a ? l.lda : 1);
    const std::uint32_t x_row = transposed ? (args.trans_b ? l.ldb : 1) : (args.trans_a ? 1 : l.lda);
    const std::uint32_t x_batch = transposed ? l.stride_b : l.stride_a;
    return x_k == 1 && x_row % 4 == 0 && x_batch % 4 == 0;
  };
  const Orientation transposed{args.n, args.m, args.k, args.batch, packed_batches(true), x_vec4(true)};
  const Orientation plain{args.m, args.n, args.k, args.batch, packed_batches(false), x_vec4(false)};
  return cost_of(blocking_for(args.n, args.m, transposed.x_vec4), transposed) <
         cost_of(blocking_for(args.m, args.n, plain.x_vec4), plain);
}

// Y seen as X[p][k] (p along n): its extents and element strides.
struct PackedShape {
  std::uint32_t n, k, stride_p, stride_k, src_batch;
};

// Packs Y into the panels.
void pack(Recording& recording, const GemmPanels& panels, const BufferSlice& src, const BufferSlice& dst,
          const PackedShape& y) {
  const std::uint32_t n = y.n, k = y.k, stride_p = y.stride_p, stride_k = y.stride_k, src_batch = y.src_batch;
  Device& device = recording.device();
  const bool aligned = src.offset % 16 == 0 && (panels.batches == 1 || src_batch % 4 == 0);
  const std::uint32_t vector = !aligned                             ? 0
                               : stride_p == 1 && stride_k % 4 == 0 ? 1
                               : stride_k == 1 && stride_p % 4 == 0 ? 2
                                                                    : 0;
  const std::uint32_t count = div_up(n, panels.width);
  GemmPackPush push{n,
                    k,
                    stride_p,
                    stride_k,
                    src_batch,
                    static_cast<std::uint32_t>(panels.floats / 4),
                    gemm_pack_chunk(panels, count)};
  const BufferSlice bindings[] = {src, dst};
  // The source's loads differ across the lanes: a texel buffer where it can be one.
  const Kernel& kernel = storage_kernel(
      device, {shaders::gemm_pack, shaders::gemm_pack_texel, shaders::gemm_pack_f16, shaders::gemm_pack_texel_f16},
      0b01, bindings, {{0, panels.width / 4}, {1, vector}}, 0b01);
  recording.dispatch(kernel, bindings, push, {div_up(panels.k_groups, push.chunk), count, panels.batches}, "gemm_pack");
}

PanelGemm panel_gemm_of(const GemmArgs& args, const GemmLayout& l, bool transposed) {
  // op(A)[m][k] and op(B)[k][n] as element strides along m (or n) and along k.
  const std::uint32_t a_m = args.trans_a ? 1 : l.lda, a_k = args.trans_a ? l.lda : 1;
  const std::uint32_t b_n = args.trans_b ? l.ldb : 1, b_k = args.trans_b ? 1 : l.ldb;
  PanelGemm g;
  g.m = transposed ? args.n : args.m;
  g.n = transposed ? args.m : args.n;
  g.k = args.k;
  g.batch = args.batch;
  g.x_row = transposed ? b_n : a_m;
  g.x_k = transposed ? b_k : a_k;
  g.x_batch = transposed ? l.stride_b : l.stride_a;
  g.c_row = transposed ? 1 : l.ldc;
  g.c_col = transposed ? l.ldc : 1;
  g.c_batch = l.stride_c;
  g.shared_y = args.batch > 1 && (transposed ? l.stride_a : l.stride_b) == 0;
  g.alpha = args.alpha;
  g.beta = args.beta;
  return g;
}

// Whether the multiply reads X's rows as vec4s (gemm_packed's a_vec4, slices taken as
// 16-byte aligned).
bool x_reads_vec4(const PanelGemm& g) {
  return g.x_k == 1 && g.x_row % 4 == 0 && g.x_batch % 4 == 0 && g.x_offset % 4 == 0;
}

// Split-K: a product too narrow for kMinWorkgroups workgroups at its best blocking, with a
// long K, runs as `splits` products over equal parts of K, batched in one dispatch, into
// partial sums that a reduction then adds into C; shrinking the blocking instead (what
// gemm_panels does) leaves each workgroup all of K at a fraction of the speed. Only for
// one product (batch 1) with beta 0, a packed C and no epilogue, where the splits divide
// K into parts of at least kMinSplitK and the product is worth the reduction's dispatch.
constexpr std::uint32_t kMinSplitK = 256;
constexpr std::uint64_t kMinSplitWork = std::uint64_t{1} << 22;  // multiply-adds

constexpr std::uint64_t kAlign = 256;  // where each part of the workspace starts
std::uint64_t aligned(std::uint64_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// How the CPU path runs a GemmArgs.
struct CpuPlan {
  bool transposed = false;
  std::uint32_t splits = 1;
  YLayout y;                 // as the multiply reads it (the parts of K as batches when split)
  std::uint32_t y_mode = 0;  // PanelGemm::y_mode; 0: Y is packed into `panels`
  PanelGemm g;               // the multiply (over one part of K, `splits` batches, when split)
  GemmPanels panels;
  ReduceArgs sums;  // split: the partial sums [splits][m * n] into C
  std::uint64_t packed_bytes = 0, partial_bytes = 0, reduce_bytes = 0;
  std::uint64_t bytes() const { return packed_bytes + partial_bytes + reduce_bytes; }
};

std::uint32_t splits_for(const GemmArgs& args, const GemmLayout& l, const PanelGemm& g) {
  if (args.batch != 1 || args.beta != 0 || l.ldc != args.n) return 1;
  if (std::uint64_t{args.m} * args.n * args.k < kMinSplitWork) return 1;
  const GemmPanels best = blocking_for(g.m, g.n, true);
  const std::uint64_t groups = std::uint64_t{div_up(g.m, best.rows)} * div_up(g.n, best.width);
  if (groups >= kMinWorkgroups) return 1;
  const auto want = static_cast<std::uint32_t>(div_up(kMinWorkgroups, groups));
  // The nearest divisor of K to `want`, above it first (more workgroups than cores is
  // cheap; fewer leaves a core idle).
  for (std::uint32_t s = want; s <= 2 * want; ++s)
    if (args.k % s == 0 && args.k / s >= kMinSplitK) return s;
  for (std::uint32_t s = want - 1; s > 1; --s)
    if (args.k % s == 0 && args.k / s >= kMinSplitK) return s;
  return 1;
}

CpuPlan cpu_plan(const GemmArgs& args, const GemmLayout& l, const Device& device, bool may_split) {
  CpuPlan plan;
  plan.transposed = transposes(args, l);
  plan.g = panel_gemm_of(args, l, plan.transposed);
  plan.splits = may_split ? splits_for(args, l, plan.g) : 1;
  if (plan.splits > 1) {  // batch s: k in [s * k', (s + 1) * k') into partial sum s
    PanelGemm& g = plan.g;
    g.k = args.k / plan.splits;
    g.batch = plan.splits;
    g.x_batch = g.k * g.x_k;
    g.c_row = plan.transposed ? 1 : args.n;
    g.c_col = plan.transposed ? args.n : 1;
    g.c_batch = args.m * args.n;
    g.shared_y = false;
    plan.sums.axis = plan.splits;
    plan.sums.inner = args.m * args.n;
    plan.partial_bytes = aligned(std::uint64_t{plan.splits} * args.m * args.n * 4);
    plan.reduce_bytes = aligned(reduce_workspace_bytes(plan.sums, device));
  }
  plan.panels = gemm_panels(plan.g);
  plan.y = y_layout(args, l, plan.transposed);
  if (plan.splits > 1) plan.y.batch = plan.g.k * plan.y.k;
  // Every slice a kernel binds starts at a multiple of minStorageBufferOffsetAlignment
  // (Recording::dispatch checks it); where that is a multiple of 16 bytes, whether Y is
  // read in place is settled here and the panels need no memory.
  if (device.limits().min_storage_buffer_offset_alignment % 16 == 0)
    plan.y_mode = gemm_y_in_place(BufferSlice{}, plan.g.n, plan.y.n, plan.y.k, plan.y.batch);
  plan.packed_bytes = plan.y_mode != 0 ? 0 : aligned(plan.panels.bytes());
  return plan;
}

void gemm_cpu(Recording& recording, const GemmArgs& args, const GemmLayout& l, const GemmSlices& slices,
              const BufferSlice& workspace, const GemmEpilogue& epilogue) {
  const BufferSlice &a = slices.a, &b = slices.b, &c = slices.c;
  const CpuPlan plan = cpu_plan(args, l, recording.device(), epilogue.empty());
  if (workspace.size < plan.bytes())
    throw Error(ErrorCode::invalid_argument, fmt::format("gemm: workspace of {} bytes, needs {} (gemm_workspace_bytes)",
                                                         workspace.size, plan.bytes()));
  const std::uint32_t k = plan.g.k, splits = plan.splits;
  const BufferSlice y = plan.transposed ? a : b;
  const YLayout& yl = plan.y;
  PanelGemm run = plan.g;
  // Planned in place: the binding's alignment makes the offset fit (an unaligned slice
  // fails at dispatch). Otherwise the offset decides, and the panels are reserved.
  run.y_mode = plan.y_mode != 0 ? plan.y_mode : gemm_y_in_place(y, plan.g.n, yl.n, yl.k, yl.batch);
  BufferSlice y_operand = y;
  if (run.y_mode == 0) {
    y_operand = workspace.sub(0, plan.panels.bytes());
    pack(recording, plan.panels, y, y_operand, {plan.g.n, k, yl.n, yl.k, yl.batch});
  } else {
    run.y_ld = run.y_mode == 1 ? yl.k : yl.n;
    run.y_batch = yl.batch;
  }
  run.bias_row = plan.transposed ? 1 : 0;  // the bias runs along C's columns: the run's rows when transposed
  run.bias_col = plan.transposed ? 0 : 1;
  const BufferSlice x = plan.transposed ? b : a;
  if (splits == 1) {
    gemm_packed(recording, run, plan.panels, {x, y_operand, c}, epilogue);
    return;
  }
  const BufferSlice partials = workspace.sub(plan.packed_bytes, plan.partial_bytes);
  gemm_packed(recording, run, plan.panels, {x, y_operand, partials});
  reduce(recording, plan.sums, partials, c, workspace.sub(plan.packed_bytes + plan.partial_bytes, plan.reduce_bytes));
}

}  // namespace

std::uint64_t GemmPanels::bytes() const { return std::max<std::uint64_t>(floats * batches * 4, 16); }

std::uint32_t gemm_pack_chunk(const GemmPanels& panels, std::uint32_t panel_count) {
  // A few hundred workgroups in all: each costs about a microsecond on lavapipe.
  const std::uint32_t split =
      std::max<std::uint32_t>(1, std::min(panels.k_groups, div_up(256, std::uint64_t{panel_count} * panels.batches)));
  return std::max<std::uint32_t>(1, div_up(panels.k_groups, split));
}

GemmPanels gemm_panels(const PanelGemm& g) {
  GemmPanels p = blocking_for(g.m, g.n, true);
  // Enough workgroups for every core of a multi-core CPU.
  auto groups = [&] { return std::uint64_t{div_up(g.m, p.rows)} * div_up(g.n, p.width) * g.batch; };
  while (groups() < kMinWorkgroups && (p.rows > 4 || p.cols > 1)) {
    if (p.rows > 4)
      p.rows /= 2;
    else
      p.width = width_of(p.cols /= 2);
  }
  p.k_groups = div_up(g.k, 4);
  p.floats = std::uint64_t{div_up(g.n, p.width)} * p.k_groups * 4 * p.width;
  p.batches = g.shared_y ? 1 : g.batch;
  if (p.floats * p.batches > UINT32_MAX / 4)
    throw Error(
        ErrorCode::unsupported,
        fmt::format("gemm {}x{}x{} (batch {}): the packed operand exceeds 32-bit indexing", g.m, g.n, g.k, g.batch));
  return p;
}

void gemm_packed(Recording& recording, const PanelGemm& g, const GemmPanels& panels, const PackedOperands& operands,
                 const GemmEpilogue& epilogue) {
  const auto& [x, packed_y, c] = operands;
  if (g.m == 0 || g.n == 0 || g.batch == 0) return;
  GemmRegblockPush push{};
  push.m = g.m;
  push.n = g.n;
  push.k = g.k;
  push.a_row = g.x_row;
  push.a_k = g.x_k;
  push.stride_a = g.x_batch;
  push.b_batch = panels.batches == 1 ? 0 : static_cast<std::uint32_t>(panels.floats / 4);
  push.c_row = g.c_row;
  push.c_col = g.c_col;
  push.stride_c = g.c_batch;
  push.alpha = g.alpha;
  push.beta = g.beta;
  push.a_offset = g.x_offset;
  push.c_offset = g.c_offset;
  push.bias_row = g.bias_row;
  push.bias_col = g.bias_col;
  push.act_alpha = epilogue.activation_alpha;
  push.gate_alpha = epilogue.gate_alpha;
  if (g.y_mode != 0) {
    if (g.y_mode > 2 || (g.y_mode == 1 && g.n % 4 != 0) || g.y_ld % 4 != 0 || g.y_batch % 4 != 0 ||
        g.y_offset % 4 != 0 || packed_y.offset % 16 != 0)
      throw Error(ErrorCode::invalid_argument,
                  fmt::format("gemm: Y cannot be read in place (mode {}, n {}, ld {}, batch stride {}, offset {}, "
                              "slice offset {} bytes)",
                              g.y_mode, g.n, g.y_ld, g.y_batch, g.y_offset, packed_y.offset));
    push.b_ld = g.y_ld / 4;
    push.b_offset = g.y_offset / 4;
    push.b_batch = g.y_batch / 4;
  }
  Device& device = recording.device();
  // op(A) read as vec4s: rows contiguous along k, every row start 16-byte aligned.
  const bool a_vec4 = x_reads_vec4(g) && x.offset % 16 == 0;
  std::vector<SpecConstant> constants = {{0, kLanes}, {1, panels.rows}, {2, panels.cols},
                                         {3, a_vec4}, {4, g.y_mode},    {5, g.beta != 0.0f}};
  add_gemm_epilogue_constants(constants, epilogue);
  const BufferSlice bindings[] = {x, packed_y, c, epilogue_bias_binding(epilogue, x),
                                  epilogue_extra_binding(epilogue, x)};
  // X and Y through texel buffers where they can be: a storage-buffer load is a loop over
  // the lanes on lavapipe, even where all lanes read one address (X's).
  const Kernel& kernel = storage_kernel(device,
                                        {shaders::gemm_regblock, shaders::gemm_regblock_texel,
                                         shaders::gemm_regblock_f16, shaders::gemm_regblock_texel_f16},
                                        0b00011, bindings, std::move(constants), g.y_mode != 0 ? 0b11111 : 0b11101);
  recording.dispatch(kernel, bindings, push, {div_up(g.n, panels.width), div_up(g.m, panels.rows), g.batch}, "gemm");
}

std::uint32_t gemm_y_in_place(const BufferSlice& y, std::uint32_t n, std::uint32_t stride_n, std::uint32_t stride_k,
                              std::uint32_t batch_stride) {
  if (y.offset % 16 != 0 || batch_stride % 4 != 0) return 0;
  if (stride_n == 1 && stride_k % 4 == 0 && n % 4 == 0) return 1;
  if (stride_k == 1 && stride_n % 4 == 0) return 2;
  return 0;
}

std::size_t gemm_workspace_bytes(const GemmArgs& args, const Device& device) {
  if (resolve(args.choice, device) != DeviceKind::cpu || args.m == 0 || args.n == 0 || args.batch == 0) return 0;
  const GemmLayout l = gemm_layout(args);
  // Split or not is settled when the epilogue is known: room for either.
  return std::max(cpu_plan(args, l, device, true).bytes(), cpu_plan(args, l, device, false).bytes());
}

std::uint32_t gemm_cpu_splits(const GemmArgs& args, const Device& device) {
  if (args.m == 0 || args.n == 0 || args.batch == 0) return 1;
  return cpu_plan(args, gemm_layout(args), device, true).splits;
}

std::uint32_t gemm_cpu_y_mode(const GemmArgs& args, const Device& device) {
  if (args.m == 0 || args.n == 0 || args.batch == 0) return 0;
  const CpuPlan plan = cpu_plan(args, gemm_layout(args), device, true);
  return gemm_y_in_place(BufferSlice{}, plan.g.n, plan.y.n, plan.y.k, plan.y.batch);
}

bool gemm_cpu_transposes(const GemmArgs& args) {
  return args.m > 0 && args.n > 0 && args.batch > 0 && transposes(args, gemm_layout(args));
}

void gemm(Recording& recording, const GemmArgs& args, const GemmOperands& operands, const GemmEpilogue& epilogue) {
  const auto& [a, b, c, workspace] = operands;
  const GemmLayout l = gemm_layout(args);
  if (args.m == 0 || args.n == 0 || args.batch == 0) return;
  const std::uint32_t a_rows = args.trans_a ? args.k : args.m, a_cols = args.trans_a ? args.m : args.k;
  const std::uint32_t b_rows = args.trans_b ? args.n : args.k, b_cols = args.trans_b ? args.k : args.n;
  require_elements(a, gemm_extent(a_rows, a_cols, l.lda, args.batch, l.stride_a), "gemm", "A");
  require_elements(b, gemm_extent(b_rows, b_cols, l.ldb, args.batch, l.stride_b), "gemm", "B");
  require_elements(c, gemm_extent(args.m, args.n, l.ldc, args.batch, l.stride_c), "gemm", "C");
  check_gemm_epilogue(epilogue, args.n, gemm_extent(args.m, args.n, l.ldc, args.batch, l.stride_c));
  if (resolve(args.choice, recording.device()) == DeviceKind::cpu)
    gemm_cpu(recording, args, l, {a, b, c}, workspace, epilogue);
  else
    gemm_gpu(recording, args, l, {a, b, c}, epilogue);
}

}  // namespace vkp::vk
