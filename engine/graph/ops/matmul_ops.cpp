// matmul: [batch.., M, K] x [batch.., K, N] -> [batch.., M, N], either operand transposed;
// an operand of rank 2 is shared by every batch. Kernel: vk::gemm.
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/gemm.h"

namespace vkp::graph {
namespace {

struct MatmulShape {
  std::int64_t m, n, k;
  std::vector<std::int64_t> batch;  // the output's leading dims
};

MatmulShape matmul_shape(const MatmulAttrs& attrs, const TensorType& a, const TensorType& b) {
  if (a.rank() < 2 || b.rank() < 2)
    detail::fail("operands must have rank >= 2, got " + to_string(a) + " and " + to_string(b));
  if (a.rank() != b.rank() && a.rank() != 2 && b.rank() != 2)
    detail::fail("batch ranks of " + to_string(a) + " and " + to_string(b) + " differ (one may be rank 2)");
  const std::int64_t m = attrs.transpose_a ? a.dim(-1) : a.dim(-2);
  const std::int64_t ka = attrs.transpose_a ? a.dim(-2) : a.dim(-1);
  const std::int64_t kb = attrs.transpose_b ? b.dim(-1) : b.dim(-2);
  const std::int64_t n = attrs.transpose_b ? b.dim(-2) : b.dim(-1);
  if (!detail::compatible(ka, kb))
    detail::fail("inner dimensions differ: " + to_string(a) + (attrs.transpose_a ? "^T" : "") + " x " + to_string(b) +
                 (attrs.transpose_b ? "^T" : "") + " (" + std::to_string(ka) + " vs " + std::to_string(kb) + ")");
  const TensorType& batched = a.rank() >= b.rank() ? a : b;
  std::vector<std::int64_t> batch(batched.dims.begin(), batched.dims.end() - 2);
  if (a.rank() == b.rank())
    for (int i = 0; i + 2 < a.rank(); ++i) {
      if (!detail::compatible(a.dim(i), b.dim(i)))
        detail::fail("batch dimensions of " + to_string(a) + " and " + to_string(b) + " differ");
      batch[static_cast<std::size_t>(i)] = a.dim(i) >= 0 ? a.dim(i) : b.dim(i);
    }
  return {m, n, ka >= 0 ? ka : kb, batch};
}

TensorType infer_matmul(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "a");
  detail::require_f32(in[1], "b");
  MatmulShape s = matmul_shape(std::get<MatmulAttrs>(node.attrs), in[0], in[1]);
  s.batch.push_back(s.m);
  s.batch.push_back(s.n);
  return f32(s.batch);
}

std::vector<Tensor> grad_matmul(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const MatmulAttrs& t = std::get<MatmulAttrs>(node.attrs);
  const Tensor a = in[0], b = in[1];
  Tensor da, db;
  if (!t.transpose_a && !t.transpose_b) {
    da = matmul(dy, b, /*transpose_a=*/false, /*transpose_b=*/true);
    db = matmul(a, dy, /*transpose_a=*/true, /*transpose_b=*/false);
  } else if (t.transpose_a && !t.transpose_b) {
    da = matmul(b, dy, /*transpose_a=*/false, /*transpose_b=*/true);
    db = matmul(a, dy, /*transpose_a=*/false, /*transpose_b=*/false);
  } else if (!t.transpose_a && t.transpose_b) {
    da = matmul(dy, b, /*transpose_a=*/false, /*transpose_b=*/false);
    db = matmul(dy, a, /*transpose_a=*/true, /*transpose_b=*/false);
  } else {
    da = matmul(b, dy, /*transpose_a=*/true, /*transpose_b=*/true);
    db = matmul(dy, a, /*transpose_a=*/true, /*transpose_b=*/true);
  }
  // A shared (rank 2) operand sums its gradient over the batches.
  return {detail::sum_to(da, a), detail::sum_to(db, b)};
}

vk::GemmArgs gemm_args(const MatmulAttrs& t, const TensorType& a, const TensorType& b, const TensorType& out) {
  const MatmulShape s = matmul_shape(t, a, b);
  std::int64_t batch = 1;
  for (std::int64_t d : s.batch) batch *= d;
  vk::GemmArgs args;
  args.m = static_cast<std::uint32_t>(s.m);
  args.n = static_cast<std::uint32_t>(s.n);
  args.k = static_cast<std::uint32_t>(s.k);
  args.trans_a = t.transpose_a;
  args.trans_b = t.transpose_b;
  args.batch = static_cast<std::uint32_t>(batch);
  if (a.rank() == 2 && batch > 1) args.stride_a = 0;
  if (b.rank() == 2 && batch > 1) args.stride_b = 0;
  (void)out;
  return args;
}

std::size_t workspace_matmul(const Node& node, std::span<const TensorType> in, const TensorType& out,
                             const vk::Device& device) {
  return vk::gemm_workspace_bytes(gemm_args(std::get<MatmulAttrs>(node.attrs), in[0], in[1], out), device);
}

void lower_matmul_with_epilogue(LowerContext& ctx, const vk::GemmEpilogue& epilogue) {
  const vk::GemmArgs args = gemm_args(ctx.attrs<MatmulAttrs>(), ctx.in_types[0], ctx.in_types[1], ctx.out_type);
  vk::gemm(ctx.recording, args, {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace}, epilogue);
}

void lower_matmul(LowerContext& ctx) { lower_matmul_with_epilogue(ctx, {}); }

bool matmul_takes_epilogue(const Node&, std::span<const TensorType>) { return true; }

RefTensor reference_matmul(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const MatmulAttrs& t = std::get<MatmulAttrs>(node.attrs);
  const RefTensor &a = *in[0], &b = *in[1];
  const MatmulShape s = matmul_shape(t, a.type, b.type);
  std::vector<std::int64_t> dims = s.batch;
  dims.push_back(s.m);
  dims.push_back(s.n);
  RefTensor out = RefTensor::zeros(f32(dims));
  std::int64_t batch = 1;
  for (std::int64_t d : s.batch) batch *= d;
  const std::int64_t a_size = a.type.dim(-1) * a.type.dim(-2), b_size = b.type.dim(-1) * b.type.dim(-2);
  const std::int64_t lda = a.type.dim(-1), ldb = b.type.dim(-1);
  for (std::int64_t p = 0; p < batch; ++p) {
    const double* pa = a.values.data() + (a.type.rank() == 2 ? 0 : p * a_size);
    const double* pb = b.values.data() + (b.type.rank() == 2 ? 0 : p * b_size);
    double* pc = out.values.data() + p * s.m * s.n;
    for (std::int64_t i = 0; i < s.m; ++i)
      for (std::int64_t j = 0; j < s.n; ++j) {
        double sum = 0;
        for (std::int64_t q = 0; q < s.k; ++q)
          sum += pa[t.transpose_a ? q * lda + i : i * lda + q] * pb[t.transpose_b ? j * ldb + q : q * ldb + j];
        pc[i * s.n + j] = sum;
      }
  }
  return out;
}

}  // namespace

// Float16 (OpDef::f16): both operands and the result.
extern const OpDef matmul_op{.kind = OpKind::matmul,
                             .name = "matmul",
                             .infer = infer_matmul,
                             .grad = grad_matmul,
                             .lower = lower_matmul,
                             .workspace = workspace_matmul,
                             .reference = reference_matmul,
                             .takes_epilogue = matmul_takes_epilogue,
                             .lower_with_epilogue = lower_matmul_with_epilogue,
                             .f16 = {0b11, true}};

namespace {

// Operands whose batch dims differ but broadcast (numpy's rule over the leading axes:
// [B, H, M, K] x [H, K, N], or [1, H, ..] x [B, H, ..]) are broadcast to the common batch
// dims first; a copy, whose gradient (a sum over the broadcast axes) autodiff adds.
void broadcast_batches(Tensor& a, Tensor& b) {
  if (a.rank() < 3 || b.rank() < 3) return;  // rank 2 is shared by every batch already
  const std::vector<std::int64_t> batch_a(a.dims().begin(), a.dims().end() - 2);
  const std::vector<std::int64_t> batch_b(b.dims().begin(), b.dims().end() - 2);
  if (batch_a == batch_b) return;
  for (std::int64_t d : batch_a)
    if (d < 0) return;  // unknown extents: matmul_shape names the mismatch, if any
  for (std::int64_t d : batch_b)
    if (d < 0) return;
  std::vector<std::int64_t> batch;
  try {
    batch = broadcast_dims(batch_a, batch_b);
  } catch (const Error&) {
    throw Error(ErrorCode::invalid_argument, "matmul: batch dimensions of " + to_string(a.type()) + " and " +
                                                 to_string(b.type()) + " do not broadcast");
  }
  auto expand = [&](Tensor& t, const std::vector<std::int64_t>& own) {
    if (own == batch) return;
    std::vector<std::int64_t> dims = batch;
    dims.insert(dims.end(), t.dims().end() - 2, t.dims().end());
    t = broadcast_to(t, dims);
  };
  expand(a, batch_a);
  expand(b, batch_b);
}

}  // namespace

Tensor matmul(Tensor a, Tensor b, bool transpose_a, bool transpose_b) {
  broadcast_batches(a, b);
  return a.graph().add(OpKind::matmul, {a, b}, MatmulAttrs{transpose_a, transpose_b});
}

}  // namespace vkp::graph
