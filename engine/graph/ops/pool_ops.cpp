// max_pool and avg_pool over NHWC images, and their gradient (pool_grad). Average
// pooling divides by the positions inside the image (padding is not counted); the max
// gradient goes to the first maximum of each window in scan order. Kernel: vk::pool.
#include <limits>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/conv_geometry.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/pool.h"

namespace vkp::graph {
namespace {

using detail::ConvGeometry;

ConvGeometry pool_geometry(const PoolAttrs& a, const TensorType& x) {
  if (x.rank() != 4) detail::fail("the input must be NHWC (rank 4), got " + to_string(x));
  if (a.window[0] < 1 || a.window[1] < 1 || a.strides[0] < 1 || a.strides[1] < 1)
    detail::fail("window and strides must be >= 1");
  Conv2DAttrs conv;
  conv.strides = a.strides;
  conv.padding = a.padding;
  return detail::conv_geometry(conv, {x.dims[0], x.dims[1], x.dims[2], x.dims[3]},
                               {a.window[0], a.window[1], x.dims[3], x.dims[3]});
}

vk::PoolPush pool_push(const ConvGeometry& g) {
  auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  return {u(g.n),  u(g.h),  u(g.w),  u(g.c),  u(g.oh),      u(g.ow),
          u(g.kh), u(g.kw), u(g.sh), u(g.sw), u(g.pad_top), u(g.pad_left)};
}

vk::PoolMode mode_of(const PoolAttrs& a) { return a.fn == PoolFn::max ? vk::PoolMode::max : vk::PoolMode::avg; }

TensorType infer_pool(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const ConvGeometry g = pool_geometry(std::get<PoolAttrs>(node.attrs), in[0]);
  if (g.oh == 0 || g.ow == 0) detail::fail("the window is larger than the image " + to_string(in[0]));
  return f32({g.n, g.oh, g.ow, g.c});
}

std::vector<Tensor> grad_pool(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  return {in[0].graph().add(OpKind::pool_grad, {in[0], dy}, node.attrs)};
}

void lower_pool(LowerContext& ctx) {
  const PoolAttrs& a = ctx.attrs<PoolAttrs>();
  vk::pool(ctx.recording, mode_of(a), pool_push(pool_geometry(a, ctx.in_types[0])), ctx.in[0], ctx.out);
}

// Calls fn(output index, input index of each window element in scan order, window size).
struct Window {
  std::int64_t y0, y1, x0, x1;  // clipped to the image
};

Window window_of(const ConvGeometry& g, std::int64_t oy, std::int64_t ox) {
  const std::int64_t y0 = oy * g.sh - g.pad_top, x0 = ox * g.sw - g.pad_left;
  return {std::max<std::int64_t>(y0, 0), std::min(y0 + g.kh, g.h), std::max<std::int64_t>(x0, 0),
          std::min(x0 + g.kw, g.w)};
}

// For every output: the flat input index of the window's first maximum, or every
// element with weight 1 / count (avg). fn(out, in, weight).
template <class Fn>
void for_each_pooled(const PoolAttrs& a, const ConvGeometry& g, const std::vector<double>& x, Fn fn) {
  for (std::int64_t b = 0; b < g.n; ++b)
    for (std::int64_t oy = 0; oy < g.oh; ++oy)
      for (std::int64_t ox = 0; ox < g.ow; ++ox)
        for (std::int64_t c = 0; c < g.c; ++c) {
          const Window w = window_of(g, oy, ox);
          const std::int64_t out = ((b * g.oh + oy) * g.ow + ox) * g.c + c;
          const double count = static_cast<double>((w.y1 - w.y0) * (w.x1 - w.x0));
          std::int64_t best = -1;
          for (std::int64_t y = w.y0; y < w.y1; ++y)
            for (std::int64_t xx = w.x0; xx < w.x1; ++xx) {
              const std::int64_t at = ((b * g.h + y) * g.w + xx) * g.c + c;
              if (a.fn == PoolFn::avg)
                fn(out, at, 1.0 / count);
              else if (best < 0 || x[static_cast<std::size_t>(at)] > x[static_cast<std::size_t>(best)])
                best = at;
            }
          if (a.fn == PoolFn::max) fn(out, best, 1.0);
        }
}

RefTensor reference_pool(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const PoolAttrs& a = std::get<PoolAttrs>(node.attrs);
  const ConvGeometry g = pool_geometry(a, in[0]->type);
  RefTensor out = RefTensor::zeros(f32({g.n, g.oh, g.ow, g.c}));
  for_each_pooled(a, g, in[0]->values, [&](std::int64_t o, std::int64_t i, double weight) {
    out.values[static_cast<std::size_t>(o)] += weight * in[0]->values[static_cast<std::size_t>(i)];
  });
  return out;
}

TensorType infer_pool_grad(const Node& node, std::span<const TensorType> in) {
  const TensorType y = infer_pool(node, in.subspan(0, 1));
  for (int i = 1; i < 4; ++i)
    if (!detail::compatible(in[1].dims[static_cast<std::size_t>(i)], y.dims[static_cast<std::size_t>(i)]))
      detail::fail("dy " + to_string(in[1]) + " does not match the pooled " + to_string(y));
  return in[0];
}

void lower_pool_grad(LowerContext& ctx) {
  const PoolAttrs& a = ctx.attrs<PoolAttrs>();
  vk::pool_grad(ctx.recording, mode_of(a), pool_push(pool_geometry(a, ctx.in_types[0])), ctx.in[0], ctx.in[1], ctx.out);
}

RefTensor reference_pool_grad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const PoolAttrs& a = std::get<PoolAttrs>(node.attrs);
  const ConvGeometry g = pool_geometry(a, in[0]->type);
  RefTensor out = RefTensor::zeros(in[0]->type);
  for_each_pooled(a, g, in[0]->values, [&](std::int64_t o, std::int64_t i, double weight) {
    out.values[static_cast<std::size_t>(i)] += weight * in[1]->values[static_cast<std::size_t>(o)];
  });
  return out;
}

Tensor pool_node(PoolFn fn, Tensor x, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides,
                 Padding padding) {
  return x.graph().add(OpKind::pool, {x}, PoolAttrs{fn, window, strides, padding},
                       fn == PoolFn::max ? "max_pool" : "avg_pool");
}

}  // namespace

// Float16 (OpDef::f16): x, dy and the result.
extern const OpDef pool_op{.kind = OpKind::pool,
                           .name = "pool",
                           .infer = infer_pool,
                           .grad = grad_pool,
                           .lower = lower_pool,
                           .workspace = nullptr,
                           .reference = reference_pool,
                           .f16 = {0b1, true}};
// Second derivatives through pooling are not implemented (grad nullptr).
extern const OpDef pool_grad_op{.kind = OpKind::pool_grad,
                                .name = "pool_grad",
                                .infer = infer_pool_grad,
                                .grad = nullptr,
                                .lower = lower_pool_grad,
                                .workspace = nullptr,
                                .reference = reference_pool_grad,
                                .f16 = {0b11, true}};

Tensor max_pool(Tensor x, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides, Padding padding) {
  return pool_node(PoolFn::max, x, window, strides, padding);
}

Tensor avg_pool(Tensor x, std::array<std::int64_t, 2> window, std::array<std::int64_t, 2> strides, Padding padding) {
  return pool_node(PoolFn::avg, x, window, strides, padding);
}

Tensor global_avg_pool(Tensor x) {
  if (x.rank() != 4)
    throw Error(ErrorCode::invalid_argument,
                "global_avg_pool: " + x.name() + " " + to_string(x.type()) + " is not NHWC");
  return reduce_mean(x, {1, 2});
}

}  // namespace vkp::graph
