// resize (nearest, bilinear) of NHWC images and its gradient (resize_grad), with
// TensorFlow 1's align_corners=False sampling (attrs.h, ResizeAttrs). The reference
// samples at the positions the kernel computes (float scale, float product) and sums in
// double. Kernel: vk::resize.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/resize.h"

namespace vkp::graph {
namespace {

struct Geometry {
  std::int64_t n, h, w, c, oh, ow;
  float scale_h, scale_w;
};

Geometry geometry(const ResizeAttrs& a, const TensorType& x) {
  if (x.rank() != 4) detail::fail("the input must be NHWC (rank 4), got " + to_string(x));
  if (a.size[0] < 1 || a.size[1] < 1)
    detail::fail("the output size must be at least 1 x 1, got " + std::to_string(a.size[0]) + " x " +
                 std::to_string(a.size[1]));
  const auto scale = [](std::int64_t in, std::int64_t out) {
    return in < 0 ? 0.0f : static_cast<float>(in) / static_cast<float>(out);
  };
  return {x.dims[0],
          x.dims[1],
          x.dims[2],
          x.dims[3],
          a.size[0],
          a.size[1],
          scale(x.dims[1], a.size[0]),
          scale(x.dims[2], a.size[1])};
}

vk::ResizePush push(const Geometry& g) {
  auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  return {u(g.n), u(g.h), u(g.w), u(g.c), u(g.oh), u(g.ow), g.scale_h, g.scale_w};
}

vk::ResizeKind kind_of(const ResizeAttrs& a) {
  return a.method == ResizeMethod::nearest ? vk::ResizeKind::nearest : vk::ResizeKind::bilinear;
}

// The input indices output index o reads along an axis, and the second one's weight, as
// shaders/resize.comp computes them.
struct Taps {
  std::int64_t i0, i1;
  double w1;
};

Taps taps(std::int64_t o, std::int64_t size, float scale, ResizeMethod method) {
  const float s = static_cast<float>(o) * scale;
  const float f = std::floor(s);
  const std::int64_t i0 = std::min(static_cast<std::int64_t>(f), size - 1);
  if (method == ResizeMethod::nearest) return {i0, i0, 0.0};
  return {i0, std::min(i0 + 1, size - 1), static_cast<double>(s - f)};
}

// fn(output index, input index, weight) over every (output, input) pair that interacts.
template <class Fn>
void for_each_tap(const ResizeAttrs& a, const Geometry& g, Fn fn) {
  for (std::int64_t b = 0; b < g.n; ++b)
    for (std::int64_t oy = 0; oy < g.oh; ++oy) {
      const Taps ty = taps(oy, g.h, g.scale_h, a.method);
      for (std::int64_t ox = 0; ox < g.ow; ++ox) {
        const Taps tx = taps(ox, g.w, g.scale_w, a.method);
        const std::int64_t ys[2] = {ty.i0, ty.i1}, xs[2] = {tx.i0, tx.i1};
        const double wy[2] = {1 - ty.w1, ty.w1}, wx[2] = {1 - tx.w1, tx.w1};
        for (std::int64_t ch = 0; ch < g.c; ++ch) {
          const std::int64_t out = ((b * g.oh + oy) * g.ow + ox) * g.c + ch;
          for (int j = 0; j < 2; ++j)
            for (int i = 0; i < 2; ++i)
              if (wy[j] * wx[i] != 0) fn(out, ((b * g.h + ys[j]) * g.w + xs[i]) * g.c + ch, wy[j] * wx[i]);
        }
      }
    }
}

TensorType infer_resize(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const Geometry g = geometry(std::get<ResizeAttrs>(node.attrs), in[0]);
  return f32({g.n, g.oh, g.ow, g.c});
}

std::vector<Tensor> grad_resize(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  return {in[0].graph().add(OpKind::resize_grad, {in[0], dy}, node.attrs)};
}

void lower_resize(LowerContext& ctx) {
  const ResizeAttrs& a = ctx.attrs<ResizeAttrs>();
  vk::resize(ctx.recording, kind_of(a), push(geometry(a, ctx.in_types[0])), ctx.in[0], ctx.out);
}

RefTensor reference_resize(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const ResizeAttrs& a = std::get<ResizeAttrs>(node.attrs);
  const Geometry g = geometry(a, in[0]->type);
  RefTensor out = RefTensor::zeros(f32({g.n, g.oh, g.ow, g.c}));
  for_each_tap(a, g, [&](std::int64_t o, std::int64_t i, double weight) {
    out.values[static_cast<std::size_t>(o)] += weight * in[0]->values[static_cast<std::size_t>(i)];
  });
  return out;
}

// Inputs: x (for its shape) and dy.
TensorType infer_resize_grad(const Node& node, std::span<const TensorType> in) {
  const TensorType y = infer_resize(node, in.subspan(0, 1));
  for (int i = 0; i < 4; ++i)
    if (!detail::compatible(in[1].dims[static_cast<std::size_t>(i)], y.dims[static_cast<std::size_t>(i)]))
      detail::fail("dy " + to_string(in[1]) + " does not match the resized " + to_string(y));
  return in[0];
}

void lower_resize_grad(LowerContext& ctx) {
  const ResizeAttrs& a = ctx.attrs<ResizeAttrs>();
  vk::resize_grad(ctx.recording, kind_of(a), push(geometry(a, ctx.in_types[0])), ctx.in[1], ctx.out);
}

RefTensor reference_resize_grad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const ResizeAttrs& a = std::get<ResizeAttrs>(node.attrs);
  const Geometry g = geometry(a, in[0]->type);
  RefTensor out = RefTensor::zeros(in[0]->type);
  for_each_tap(a, g, [&](std::int64_t o, std::int64_t i, double weight) {
    out.values[static_cast<std::size_t>(i)] += weight * in[1]->values[static_cast<std::size_t>(o)];
  });
  return out;
}

}  // namespace

extern const OpDef resize_op{OpKind::resize, "resize", infer_resize,    grad_resize,
                             lower_resize,   nullptr,  reference_resize};
// Second derivatives through resizing are not implemented (grad nullptr).
extern const OpDef resize_grad_op{OpKind::resize_grad, "resize_grad", infer_resize_grad,    nullptr,
                                  lower_resize_grad,   nullptr,       reference_resize_grad};

Tensor resize(Tensor x, std::array<std::int64_t, 2> size, ResizeMethod method) {
  return x.graph().add(OpKind::resize, {x}, ResizeAttrs{method, size},
                       method == ResizeMethod::nearest ? "resize_nearest" : "resize_bilinear");
}

}  // namespace vkp::graph
