// conv2d (NHWC input, HWIO filter, strides, same/valid padding, dilation, groups) and
// its two gradients, conv2d_backprop_input (also conv2d_transpose) and
// conv2d_backprop_filter. All three are implicit GEMMs where vk::implicit_conv
// supports them (the input gradient with one group and stride 1); otherwise, and for
// pointwise convolutions, im2col / col2im and the strided-batched GEMM (one batch per
// group).
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/conv_geometry.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/conv.h"
#include "engine/vk/kernels/gemm.h"
#include "engine/vk/kernels/implicit_conv.h"

namespace vkp::graph {
namespace {

using detail::ConvGeometry;
using detail::fail;

std::array<std::int64_t, 4> dims4(const TensorType& t, const char* what) {
  if (t.rank() != 4) fail(std::string(what) + " must have rank 4, got " + to_string(t));
  return {t.dims[0], t.dims[1], t.dims[2], t.dims[3]};
}

void check_attrs(const Conv2DAttrs& a) {
  if (a.strides[0] < 1 || a.strides[1] < 1 || a.dilations[0] < 1 || a.dilations[1] < 1 || a.groups < 1)
    fail("strides, dilations and groups must be >= 1");
}

// Checks that input channels and the filter agree; returns the geometry.
ConvGeometry checked_geometry(const Conv2DAttrs& a, const std::array<std::int64_t, 4>& x,
                              const std::array<std::int64_t, 4>& w) {
  check_attrs(a);
  if (x[3] >= 0 && x[3] != w[2] * a.groups)
    fail("input has " + std::to_string(x[3]) + " channels, W expects " + std::to_string(w[2] * a.groups) +
         (a.groups > 1 ? " (" + std::to_string(w[2]) + " per group x " + std::to_string(a.groups) + " groups)" : ""));
  if (w[3] % a.groups != 0)
    fail("W has " + std::to_string(w[3]) + " output channels, not a multiple of " + std::to_string(a.groups) +
         " groups");
  return detail::conv_geometry(a, x, w);
}

vk::ConvPush conv_push(const ConvGeometry& g) {
  auto u = [](std::int64_t v) { return static_cast<std::uint32_t>(v); };
  return {u(g.n),  u(g.h),  u(g.w),  u(g.c),  u(g.oh),      u(g.ow),       u(g.kh),    u(g.kw),
          u(g.sh), u(g.sw), u(g.dh), u(g.dw), u(g.pad_top), u(g.pad_left), u(g.groups)};
}

std::uint64_t col_bytes(const ConvGeometry& g) {
  if (g.pointwise()) return 0;
  const std::uint64_t bytes = vk::im2col_elements(conv_push(g)) * 4;
  return (bytes + vk::Arena::kAlignment - 1) / vk::Arena::kAlignment * vk::Arena::kAlignment;
}

// The im2col matrix [rows, groups * k] of x: x itself when pointwise, else written to
// the front of the workspace.
vk::BufferSlice col_matrix(LowerContext& ctx, const ConvGeometry& g, const vk::BufferSlice& x) {
  if (g.pointwise()) return x;
  const vk::BufferSlice col = ctx.workspace.sub(0, vk::im2col_elements(conv_push(g)) * 4);
  vk::im2col(ctx.recording, conv_push(g), x, col);
  return col;
}

vk::BufferSlice gemm_workspace(LowerContext& ctx, const ConvGeometry& g) {
  const std::uint64_t at = col_bytes(g);
  return ctx.workspace.sub(at, ctx.workspace.size - at);
}

std::uint32_t u(std::int64_t v) { return static_cast<std::uint32_t>(v); }

// out [rows, cout] = col [rows, groups * k] . W [k, cout], group by group.
vk::GemmArgs forward_gemm(const ConvGeometry& g) {
  vk::GemmArgs args;
  args.m = u(g.rows());
  args.n = u(g.coutg());
  args.k = u(g.k());
  args.batch = u(g.groups);
  args.lda = u(g.groups * g.k());
  args.stride_a = u(g.k());
  args.ldb = u(g.cout);
  args.stride_b = u(g.coutg());
  args.ldc = u(g.cout);
  args.stride_c = u(g.coutg());
  return args;
}

// dcol [rows, groups * k] = dy [rows, cout] . W^T, group by group.
vk::GemmArgs input_gemm(const ConvGeometry& g) {
  vk::GemmArgs args;
  args.m = u(g.rows());
  args.n = u(g.k());
  args.k = u(g.coutg());
  args.trans_b = true;
  args.batch = u(g.groups);
  args.lda = u(g.cout);
  args.stride_a = u(g.coutg());
  args.ldb = u(g.cout);
  args.stride_b = u(g.coutg());
  args.ldc = u(g.groups * g.k());
  args.stride_c = u(g.k());
  return args;
}

// dW [k, cout] = col^T . dy, group by group. col^T is written by a transposed im2col
// ([groups * k, rows]), which the GEMM reads untransposed (1.5x the speed of reading
// col transposed on lavapipe); pointwise, col is x itself and is read transposed.
vk::GemmArgs filter_gemm(const ConvGeometry& g) {
  vk::GemmArgs args;
  args.m = u(g.k());
  args.n = u(g.coutg());
  args.k = u(g.rows());
  args.batch = u(g.groups);
  if (g.pointwise()) {
    args.trans_a = true;
    args.lda = u(g.groups * g.k());
    args.stride_a = u(g.k());
  } else {
    args.lda = u(g.rows());
    args.stride_a = u(g.k() * g.rows());
  }
  args.ldb = u(g.cout);
  args.stride_b = u(g.coutg());
  args.ldc = u(g.cout);
  args.stride_c = u(g.coutg());
  return args;
}

// --- conv2d: inputs x, w ---

TensorType infer_conv2d(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  detail::require_f32(in[1], "the filter W");
  const ConvGeometry g =
      checked_geometry(std::get<Conv2DAttrs>(node.attrs), dims4(in[0], "the input"), dims4(in[1], "the filter W"));
  return f32({g.n, g.oh, g.ow, g.cout});
}

ConvGeometry geometry_conv2d(const Node& node, std::span<const TensorType> in) {
  return checked_geometry(std::get<Conv2DAttrs>(node.attrs), dims4(in[0], "x"), dims4(in[1], "w"));
}

std::vector<Tensor> grad_conv2d(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  Conv2DAttrs a = std::get<Conv2DAttrs>(node.attrs);
  const Tensor x = in[0], w = in[1];
  if (x.dims()[1] < 0 || x.dims()[2] < 0)
    throw Error(ErrorCode::unsupported, node.name + ": gradients need the input's height and width at build time");
  a.input_hw = {x.dims()[1], x.dims()[2]};
  a.filter_dims = {w.dims()[0], w.dims()[1], w.dims()[2], w.dims()[3]};
  Graph& g = x.graph();
  return {g.add(OpKind::conv2d_backprop_input, {dy, w}, a), g.add(OpKind::conv2d_backprop_filter, {x, dy}, a)};
}

// Implicit GEMM where it applies: a patch matrix that is not x itself, and what
// vk::implicit_conv supports.
bool implicit(const ConvGeometry& g, const vk::Device& device, vk::ConvProduct product) {
  return !g.pointwise() && vk::implicit_conv_supports(conv_push(g), u(g.cout), product, device);
}

std::size_t workspace_conv2d(const Node& node, std::span<const TensorType> in, const TensorType&, const vk::Device& d) {
  const ConvGeometry g = geometry_conv2d(node, in);
  if (implicit(g, d, vk::ConvProduct::forward))
    return vk::implicit_conv_workspace_bytes(conv_push(g), u(g.cout), vk::ConvProduct::forward, d);
  return col_bytes(g) + vk::gemm_workspace_bytes(forward_gemm(g), d);
}

// One group: the epilogue's bias runs along every output channel (fusion.h).
bool conv2d_takes_epilogue(const Node& node, std::span<const TensorType> in) {
  return geometry_conv2d(node, in).groups == 1;
}

void lower_conv2d_with_epilogue(LowerContext& ctx, const vk::GemmEpilogue& epilogue) {
  const ConvGeometry g = geometry_conv2d(ctx.node, ctx.in_types);
  if (implicit(g, ctx.recording.device(), vk::ConvProduct::forward)) {
    vk::implicit_conv(ctx.recording, {conv_push(g), u(g.cout), vk::ConvProduct::forward},
                      {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace}, vk::KernelChoice::automatic, epilogue);
    return;
  }
  vk::gemm(ctx.recording, forward_gemm(g), {ctx.in[0], ctx.in[1], ctx.out, gemm_workspace(ctx, g)},
           epilogue);  // pointwise
}

void lower_conv2d(LowerContext& ctx) {
  const ConvGeometry g = geometry_conv2d(ctx.node, ctx.in_types);
  if (implicit(g, ctx.recording.device(), vk::ConvProduct::forward)) {
    vk::implicit_conv(ctx.recording, {conv_push(g), u(g.cout), vk::ConvProduct::forward},
                      {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace});
    return;
  }
  const vk::BufferSlice col = col_matrix(ctx, g, ctx.in[0]);
  vk::gemm(ctx.recording, forward_gemm(g), {col, ctx.in[1], ctx.out, gemm_workspace(ctx, g)});
}

// Calls fn(b, oy, ox, i, j, y, x) for every (output, tap) pair whose input pixel is
// inside the image: the reference's direct convolution.
template <class Fn>
void for_each_tap(const ConvGeometry& g, Fn fn) {
  for (std::int64_t b = 0; b < g.n; ++b)
    for (std::int64_t oy = 0; oy < g.oh; ++oy)
      for (std::int64_t ox = 0; ox < g.ow; ++ox)
        for (std::int64_t i = 0; i < g.kh; ++i)
          for (std::int64_t j = 0; j < g.kw; ++j) {
            const std::int64_t y = oy * g.sh - g.pad_top + i * g.dh, xx = ox * g.sw - g.pad_left + j * g.dw;
            if (y >= 0 && y < g.h && xx >= 0 && xx < g.w) fn(b, oy, ox, i, j, y, xx);
          }
}

RefTensor reference_conv2d(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const TensorType types[] = {in[0]->type, in[1]->type};
  const ConvGeometry g = geometry_conv2d(node, types);
  const std::vector<double>& x = in[0]->values;
  const std::vector<double>& w = in[1]->values;
  RefTensor out = RefTensor::zeros(f32({g.n, g.oh, g.ow, g.cout}));
  for_each_tap(g, [&](auto b, auto oy, auto ox, auto i, auto j, auto y, auto xx) {
    for (std::int64_t co = 0; co < g.cout; ++co) {
      const std::int64_t group = co / g.coutg();
      double sum = 0;
      for (std::int64_t ci = 0; ci < g.cg(); ++ci)
        sum += x[static_cast<std::size_t>(((b * g.h + y) * g.w + xx) * g.c + group * g.cg() + ci)] *
               w[static_cast<std::size_t>(((i * g.kw + j) * g.cg() + ci) * g.cout + co)];
      out.values[static_cast<std::size_t>(((b * g.oh + oy) * g.ow + ox) * g.cout + co)] += sum;
    }
  });
  return out;
}

// --- conv2d_backprop_input: inputs dy [N, OH, OW, Cout], w; output [N, H, W, Cin] ---

ConvGeometry geometry_backprop_input(const Node& node, std::span<const TensorType> in) {
  const Conv2DAttrs& a = std::get<Conv2DAttrs>(node.attrs);
  const std::array<std::int64_t, 4> dy = dims4(in[0], "dy"), w = dims4(in[1], "the filter W");
  const ConvGeometry g = checked_geometry(a, {dy[0], a.input_hw[0], a.input_hw[1], w[2] * a.groups}, w);
  if ((dy[1] >= 0 && dy[1] != g.oh) || (dy[2] >= 0 && dy[2] != g.ow) || (dy[3] >= 0 && dy[3] != g.cout))
    fail("dy " + to_string(in[0]) + " does not match a convolution of a " + std::to_string(a.input_hw[0]) + "x" +
         std::to_string(a.input_hw[1]) + " input with W " + to_string(in[1]) + " (expected [?, " +
         std::to_string(g.oh) + ", " + std::to_string(g.ow) + ", " + std::to_string(g.cout) + "])");
  return g;
}

TensorType infer_backprop_input(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "dy");
  detail::require_f32(in[1], "the filter W");
  const ConvGeometry g = geometry_backprop_input(node, in);
  return f32({g.n, g.h, g.w, g.c});
}

std::vector<Tensor> grad_backprop_input(const Node& node, std::span<const Tensor> in, Tensor, Tensor d) {
  Conv2DAttrs a = std::get<Conv2DAttrs>(node.attrs);
  const Tensor dy = in[0], w = in[1];
  a.filter_dims = {w.dims()[0], w.dims()[1], w.dims()[2], w.dims()[3]};
  Graph& g = dy.graph();
  return {g.add(OpKind::conv2d, {d, w}, a), g.add(OpKind::conv2d_backprop_filter, {d, dy}, a)};
}

std::size_t workspace_backprop_input(const Node& node, std::span<const TensorType> in, const TensorType&,
                                     const vk::Device& d) {
  const ConvGeometry g = geometry_backprop_input(node, in);
  if (implicit(g, d, vk::ConvProduct::input_gradient))
    return vk::implicit_conv_workspace_bytes(conv_push(g), u(g.cout), vk::ConvProduct::input_gradient, d);
  return col_bytes(g) + vk::gemm_workspace_bytes(input_gemm(g), d);
}

// One group, and a product that writes dx itself (implicit, or pointwise), not col2im.
bool backprop_input_takes_epilogue(const Node& node, std::span<const TensorType> in) {
  const ConvGeometry g = geometry_backprop_input(node, in);
  return g.groups == 1 && (g.pointwise() || vk::implicit_conv_supports(conv_push(g), vk::ConvProduct::input_gradient));
}

void lower_backprop_input_with_epilogue(LowerContext& ctx, const vk::GemmEpilogue& epilogue) {
  const ConvGeometry g = geometry_backprop_input(ctx.node, ctx.in_types);
  if (g.pointwise()) {
    vk::gemm(ctx.recording, input_gemm(g), {ctx.in[0], ctx.in[1], ctx.out, gemm_workspace(ctx, g)}, epilogue);
    return;
  }
  vk::implicit_conv(ctx.recording, {conv_push(g), u(g.cout), vk::ConvProduct::input_gradient},
                    {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace}, vk::KernelChoice::automatic, epilogue);
}

void lower_backprop_input(LowerContext& ctx) {
  const ConvGeometry g = geometry_backprop_input(ctx.node, ctx.in_types);
  if (implicit(g, ctx.recording.device(), vk::ConvProduct::input_gradient)) {
    vk::implicit_conv(ctx.recording, {conv_push(g), u(g.cout), vk::ConvProduct::input_gradient},
                      {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace});
    return;
  }
  if (g.pointwise()) {
    vk::gemm(ctx.recording, input_gemm(g), {ctx.in[0], ctx.in[1], ctx.out, gemm_workspace(ctx, g)});
    return;
  }
  const vk::BufferSlice col = ctx.workspace.sub(0, vk::im2col_elements(conv_push(g)) * 4);
  vk::gemm(ctx.recording, input_gemm(g), {ctx.in[0], ctx.in[1], col, gemm_workspace(ctx, g)});
  vk::col2im(ctx.recording, conv_push(g), col, ctx.out);
}

RefTensor reference_backprop_input(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const TensorType types[] = {in[0]->type, in[1]->type};
  const ConvGeometry g = geometry_backprop_input(node, types);
  const std::vector<double>& dy = in[0]->values;
  const std::vector<double>& w = in[1]->values;
  RefTensor out = RefTensor::zeros(f32({g.n, g.h, g.w, g.c}));
  for_each_tap(g, [&](auto b, auto oy, auto ox, auto i, auto j, auto y, auto xx) {
    for (std::int64_t co = 0; co < g.cout; ++co) {
      const std::int64_t group = co / g.coutg();
      const double d = dy[static_cast<std::size_t>(((b * g.oh + oy) * g.ow + ox) * g.cout + co)];
      for (std::int64_t ci = 0; ci < g.cg(); ++ci)
        out.values[static_cast<std::size_t>(((b * g.h + y) * g.w + xx) * g.c + group * g.cg() + ci)] +=
            d * w[static_cast<std::size_t>(((i * g.kw + j) * g.cg() + ci) * g.cout + co)];
    }
  });
  return out;
}

// --- conv2d_backprop_filter: inputs x, dy; output [KH, KW, Cin / groups, Cout] ---

ConvGeometry geometry_backprop_filter(const Node& node, std::span<const TensorType> in) {
  const Conv2DAttrs& a = std::get<Conv2DAttrs>(node.attrs);
  return checked_geometry(a, dims4(in[0], "x"), a.filter_dims);
}

TensorType infer_backprop_filter(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "x");
  detail::require_f32(in[1], "dy");
  const ConvGeometry g = geometry_backprop_filter(node, in);
  const std::array<std::int64_t, 4> dy = dims4(in[1], "dy");
  if (!detail::compatible(dy[1], g.oh) || !detail::compatible(dy[2], g.ow) || !detail::compatible(dy[3], g.cout))
    fail("dy " + to_string(in[1]) + " does not match the convolution of x " + to_string(in[0]));
  const auto& f = std::get<Conv2DAttrs>(node.attrs).filter_dims;
  return f32({f[0], f[1], f[2], f[3]});
}

std::size_t workspace_backprop_filter(const Node& node, std::span<const TensorType> in, const TensorType&,
                                      const vk::Device& d) {
  const ConvGeometry g = geometry_backprop_filter(node, in);
  if (implicit(g, d, vk::ConvProduct::filter_gradient))
    return vk::implicit_conv_workspace_bytes(conv_push(g), u(g.cout), vk::ConvProduct::filter_gradient, d);
  return col_bytes(g) + vk::gemm_workspace_bytes(filter_gemm(g), d);
}

void lower_backprop_filter(LowerContext& ctx) {
  const ConvGeometry g = geometry_backprop_filter(ctx.node, ctx.in_types);
  if (implicit(g, ctx.recording.device(), vk::ConvProduct::filter_gradient)) {
    vk::implicit_conv(ctx.recording, {conv_push(g), u(g.cout), vk::ConvProduct::filter_gradient},
                      {ctx.in[0], ctx.in[1], ctx.out, ctx.workspace});
    return;
  }
  vk::BufferSlice col = ctx.in[0];
  if (!g.pointwise()) {
    col = ctx.workspace.sub(0, vk::im2col_elements(conv_push(g)) * 4);
    vk::im2col(ctx.recording, conv_push(g), ctx.in[0], col, /*transposed=*/true);
  }
  vk::gemm(ctx.recording, filter_gemm(g), {col, ctx.in[1], ctx.out, gemm_workspace(ctx, g)});
}

RefTensor reference_backprop_filter(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const TensorType types[] = {in[0]->type, in[1]->type};
  const ConvGeometry g = geometry_backprop_filter(node, types);
  const std::vector<double>& x = in[0]->values;
  const std::vector<double>& dy = in[1]->values;
  RefTensor out = RefTensor::zeros(f32({g.kh, g.kw, g.cg(), g.cout}));
  for_each_tap(g, [&](auto b, auto oy, auto ox, auto i, auto j, auto y, auto xx) {
    for (std::int64_t co = 0; co < g.cout; ++co) {
      const std::int64_t group = co / g.coutg();
      const double d = dy[static_cast<std::size_t>(((b * g.oh + oy) * g.ow + ox) * g.cout + co)];
      for (std::int64_t ci = 0; ci < g.cg(); ++ci)
        out.values[static_cast<std::size_t>(((i * g.kw + j) * g.cg() + ci) * g.cout + co)] +=
            d * x[static_cast<std::size_t>(((b * g.h + y) * g.w + xx) * g.c + group * g.cg() + ci)];
    }
  });
  return out;
}

}  // namespace

// Float16 (OpDef::f16): the data operands, x or dy, and the result; a filter is read as
// float32 (the CPU path rearranges it with a float32 copy), and a filter gradient is
// float32, for its optimizer.
extern const OpDef conv2d_op{.kind = OpKind::conv2d,
                             .name = "conv2d",
                             .infer = infer_conv2d,
                             .grad = grad_conv2d,
                             .lower = lower_conv2d,
                             .workspace = workspace_conv2d,
                             .reference = reference_conv2d,
                             .takes_epilogue = conv2d_takes_epilogue,
                             .lower_with_epilogue = lower_conv2d_with_epilogue,
                             .f16 = {0b01, true}};
extern const OpDef conv2d_backprop_input_op{.kind = OpKind::conv2d_backprop_input,
                                            .name = "conv2d_backprop_input",
                                            .infer = infer_backprop_input,
                                            .grad = grad_backprop_input,
                                            .lower = lower_backprop_input,
                                            .workspace = workspace_backprop_input,
                                            .reference = reference_backprop_input,
                                            .takes_epilogue = backprop_input_takes_epilogue,
                                            .lower_with_epilogue = lower_backprop_input_with_epilogue,
                                            .f16 = {0b01, true}};
// Second derivatives through the filter gradient are not implemented (grad nullptr).
extern const OpDef conv2d_backprop_filter_op{.kind = OpKind::conv2d_backprop_filter,
                                             .name = "conv2d_backprop_filter",
                                             .infer = infer_backprop_filter,
                                             .grad = nullptr,
                                             .lower = lower_backprop_filter,
                                             .workspace = workspace_backprop_filter,
                                             .reference = reference_backprop_filter,
                                             .f16 = {0b11, false}};

Tensor conv2d(Tensor x, Tensor w, ConvOptions o) {
  Conv2DAttrs a;
  a.strides = o.strides;
  a.dilations = o.dilations;
  a.padding = o.padding;
  a.groups = o.groups;
  return x.graph().add(OpKind::conv2d, {x, w}, a);
}

Tensor conv2d_transpose(Tensor x, Tensor w, ConvOptions o) {
  if (x.rank() != 4 || w.rank() != 4)
    throw Error(ErrorCode::invalid_argument,
                "conv2d_transpose: x " + to_string(x.type()) + " and w " + to_string(w.type()) + " must have rank 4");
  Conv2DAttrs a;
  a.strides = o.strides;
  a.dilations = o.dilations;
  a.padding = o.padding;
  a.groups = o.groups;
  for (int i = 0; i < 2; ++i) {
    const std::int64_t in = x.dims()[static_cast<std::size_t>(1 + i)], k = w.dims()[static_cast<std::size_t>(i)];
    if (in < 0)
      throw Error(ErrorCode::invalid_argument, "conv2d_transpose: " + x.name() + " needs a known height and width");
    a.input_hw[static_cast<std::size_t>(i)] = o.padding == Padding::same
                                                  ? in * o.strides[static_cast<std::size_t>(i)]
                                                  : (in - 1) * o.strides[static_cast<std::size_t>(i)] +
                                                        (k - 1) * o.dilations[static_cast<std::size_t>(i)] + 1;
  }
  return x.graph().add(OpKind::conv2d_backprop_input, {x, w}, a, "conv2d_transpose");
}

}  // namespace vkp::graph
