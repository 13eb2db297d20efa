#include "vkpack/engine/vk/kernels/gemm.h"

#include <algorithm>

#include <fmt/format.h>

#include "vkpack/core/error.h"
#include "vkpack/shaders/embedded.h"

namespace vkp::vk {
namespace {

// gemm_tiled: tile and per-invocation block sizes.
constexpr std::uint32_t kTileM = 64, kTileN = 64, kTileK = 16, kMicroM = 4, kMicroN = 4;
// gemm_regblock: invocations per workgroup (one SIMD vector on lavapipe's AVX2 path)
// and the fewest workgroups worth keeping a multi-core CPU busy.
constexpr std::uint32_t kLanes = 8, kMinWorkgroups = 16;

std::uint32_t div_up(std::uint64_t a, std::uint64_t b) { return static_cast<std::uint32_t>((a + b - 1) / b); }

// The stored layout of the operands after defaults are filled in.
struct Layout {
  std::uint32_t lda, ldb, ldc;
  std::uint32_t stride_a, stride_b, stride_c;
};

Layout layout_of(const GemmArgs& args) {
  const std::uint32_t a_rows = args.trans_a ? args.k : args.m, a_cols = args.trans_a ? args.m : args.k;
  const std::uint32_t b_rows = args.trans_b ? args.n : args.k, b_cols = args.trans_b ? args.k : args.n;
  Layout l{};
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

// The last element (plus one) of `batch` matrices of rows x cols, row stride ld, batch stride `stride`.
std::uint64_t extent(std::uint32_t rows, std::uint32_t cols, std::uint32_t ld, std::uint32_t batch,
                     std::uint32_t stride) {
  if (rows == 0 || cols == 0 || batch == 0) return 0;
  return std::uint64_t{batch - 1} * stride + std::uint64_t{rows - 1} * ld + cols;
}

// Register blocking of gemm_regblock for a problem: rows per workgroup and vec4
// column groups per lane, shrunk for small M and N and until there are enough
// workgroups for every core.
struct Blocking {
  std::uint32_t rows, cols;
  std::uint32_t width() const { return kLanes * 4 * cols; }
};

Blocking blocking_for(const GemmArgs& args) {
  Blocking b{16, 4};
  if (args.m <= 4) b.rows = 4;
  else if (args.m <= 8) b.rows = 8;
  // Column panels of 32, 64, 96 or 128: the widest whose padding of N is least.
  std::uint64_t least = UINT64_MAX;
  for (std::uint32_t cols = 4; cols >= 1; --cols) {
    const std::uint64_t width = kLanes * 4 * cols;
    const std::uint64_t waste = div_up(args.n, static_cast<std::uint32_t>(width)) * width - args.n;
    if (waste < least) {
      least = waste;
      b.cols = cols;
    }
  }
  auto groups = [&] { return std::uint64_t{div_up(args.m, b.rows)} * div_up(args.n, b.width()) * args.batch; };
  while (groups() < kMinWorkgroups && (b.rows > 4 || b.cols > 1)) {
    if (b.rows > 4) b.rows /= 2;
    else b.cols /= 2;
  }
  return b;
}

// The packed op(B) of gemm_cpu: floats per batch and how many batches are packed.
struct Packing {
  Blocking blocking;
  std::uint32_t k_groups;  // padded K / 4
  std::uint64_t floats;    // one packed batch
  std::uint32_t batches;   // 1 when B is shared by every batch
  std::uint64_t bytes() const { return std::max<std::uint64_t>(floats * batches * 4, 16); }  // never an empty binding
};

Packing packing_for(const GemmArgs& args, const Layout& l) {
  Packing p{};
  p.blocking = blocking_for(args);
  p.k_groups = div_up(args.k, 4);
  p.floats = std::uint64_t{div_up(args.n, p.blocking.width())} * p.k_groups * 4 * p.blocking.width();
  p.batches = args.batch > 1 && l.stride_b == 0 ? 1 : args.batch;
  if (p.floats * p.batches > UINT32_MAX / 4)
    throw Error(ErrorCode::unsupported, fmt::format("gemm {}x{}x{} (batch {}): packed B exceeds 32-bit indexing",
                                                    args.m, args.n, args.k, args.batch));
  return p;
}

// Packs X (p_extent x k_extent) into panels of `width` rows, K in runs of 4.
void pack(Recording& recording, const BufferSlice& src, const BufferSlice& dst, GemmPackPush push,
          std::uint32_t width, bool k_major, std::uint32_t k_groups, std::uint32_t batches, std::string_view label) {
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::gemm_pack, {{0, 4 * width}, {1, k_major}});
  push.k_step = std::min(k_groups, device.limits().max_workgroup_count[0]);
  recording.dispatch(kernel, {src, dst}, push, {push.k_step, div_up(push.p_extent, width), batches}, label);
}

void gemm_cpu(Recording& recording, const GemmArgs& args, const Layout& l, const BufferSlice& a, const BufferSlice& b,
              const BufferSlice& c, const BufferSlice& workspace) {
  const Packing p = packing_for(args, l);
  if (workspace.size < p.bytes())
    throw Error(ErrorCode::invalid_argument,
                fmt::format("gemm: workspace of {} bytes, needs {} (gemm_workspace_bytes)", workspace.size, p.bytes()));
  const BufferSlice packed_b = workspace.sub(0, p.bytes());
  const Blocking& blk = p.blocking;
  // B as X[column][k].
  pack(recording, b, packed_b,
       {args.n, args.k, args.trans_b ? l.ldb : 1, args.trans_b ? 1 : l.ldb, l.stride_b,
        static_cast<std::uint32_t>(p.floats)},
       blk.width(), true, p.k_groups, p.batches, "gemm_pack");
  GemmRegblockPush push{};
  push.m = args.m;
  push.n = args.n;
  push.k = args.k;
  push.a_row = args.trans_a ? 1 : l.lda;
  push.a_k = args.trans_a ? l.lda : 1;
  push.stride_a = l.stride_a;
  push.b_batch = p.batches == 1 ? 0 : static_cast<std::uint32_t>(p.floats / 4);
  push.ldc = l.ldc;
  push.stride_c = l.stride_c;
  push.alpha = args.alpha;
  push.beta = args.beta;
  Device& device = recording.device();
  const Kernel& kernel = device.kernel(shaders::gemm_regblock, {{0, kLanes}, {1, blk.rows}, {2, blk.cols}});
  recording.dispatch(kernel, {a, packed_b, c}, push, {div_up(args.n, blk.width()), div_up(args.m, blk.rows), args.batch},
                     "gemm");
}

void gemm_gpu(Recording& recording, const GemmArgs& args, const Layout& l, const BufferSlice& a, const BufferSlice& b,
              const BufferSlice& c) {
  const GemmTiledPush push{args.m,     args.n,     args.k,     l.lda,      l.ldb,     l.ldc,
                           l.stride_a, l.stride_b, l.stride_c, args.alpha, args.beta};
  const std::uint32_t threads = (kTileM / kMicroM) * (kTileN / kMicroN);
  Device& device = recording.device();
  const Kernel& kernel =
      device.kernel(shaders::gemm_tiled, {{0, threads}, {1, kTileM}, {2, kTileN}, {3, kTileK}, {4, kMicroM},
                                          {5, kMicroN}, {6, args.trans_a}, {7, args.trans_b}});
  recording.dispatch(kernel, {a, b, c}, push, {div_up(args.n, kTileN), div_up(args.m, kTileM), args.batch}, "gemm");
}

}  // namespace

std::size_t gemm_workspace_bytes(const GemmArgs& args, const Device& device) {
  if (resolve(args.choice, device) != DeviceKind::cpu || args.m == 0 || args.n == 0 || args.batch == 0) return 0;
  return packing_for(args, layout_of(args)).bytes();
}

void gemm(Recording& recording, const GemmArgs& args, const BufferSlice& a, const BufferSlice& b,
          const BufferSlice& c, const BufferSlice& workspace) {
  const Layout l = layout_of(args);
  if (args.m == 0 || args.n == 0 || args.batch == 0) return;
  const std::uint32_t a_rows = args.trans_a ? args.k : args.m, a_cols = args.trans_a ? args.m : args.k;
  const std::uint32_t b_rows = args.trans_b ? args.n : args.k, b_cols = args.trans_b ? args.k : args.n;
  require_elements(a, extent(a_rows, a_cols, l.lda, args.batch, l.stride_a), "gemm", "A");
  require_elements(b, extent(b_rows, b_cols, l.ldb, args.batch, l.stride_b), "gemm", "B");
  require_elements(c, extent(args.m, args.n, l.ldc, args.batch, l.stride_c), "gemm", "C");
  if (resolve(args.choice, recording.device()) == DeviceKind::cpu)
    gemm_cpu(recording, args, l, a, b, c, workspace);
  else
    gemm_gpu(recording, args, l, a, b, c);
}

}  // namespace vkp::vk
