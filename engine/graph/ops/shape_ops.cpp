// Shape ops: reshape, identity and stop_gradient (views of their input's storage), and
// slice, concat, transpose, broadcast_to and pad (vk::copy with strides).
#include <algorithm>
#include <numeric>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/copy.h"

namespace vkp::graph {
namespace {

using detail::fail;

std::vector<std::uint32_t> u32s(const std::vector<std::int64_t>& v) {
  return std::vector<std::uint32_t>(v.begin(), v.end());
}

// --- reshape: dims from attrs (one may be -1) or from a second input ---

TensorType infer_reshape(const Node& node, std::span<const TensorType> in) {
  if (in.size() == 2) return {in[0].dtype, in[1].dims};
  std::vector<std::int64_t> dims = std::get<DimsAttrs>(node.attrs).dims;
  int inferred = -1;
  std::int64_t known = 1;
  for (int i = 0; i < static_cast<int>(dims.size()); ++i) {
    if (dims[static_cast<std::size_t>(i)] >= 0) {
      known *= dims[static_cast<std::size_t>(i)];
    } else if (inferred >= 0) {
      fail("only one extent of " + dims_string(dims) + " may be -1");
    } else {
      inferred = i;
    }
  }
  const std::int64_t n = in[0].numel();
  if (inferred >= 0 && n >= 0) {
    if (known == 0 || n % known != 0) fail("cannot reshape " + to_string(in[0]) + " to " + dims_string(dims));
    dims[static_cast<std::size_t>(inferred)] = n / known;
  } else if (inferred < 0 && n >= 0 && n != known) {
    fail("cannot reshape " + to_string(in[0]) + " (" + std::to_string(n) + " elements) to " + dims_string(dims));
  }
  return {in[0].dtype, dims};
}

std::vector<Tensor> grad_reshape(const Node&, std::span<const Tensor> in, Tensor, Tensor dy) {
  std::vector<Tensor> out{dy.graph().add(OpKind::reshape, {dy, in[0]}, DimsAttrs{})};
  if (in.size() == 2) out.emplace_back();
  return out;
}

RefTensor reference_view(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = *in[0];
  if (node.op == OpKind::reshape) {
    const TensorType types[] = {in[0]->type, in.size() == 2 ? in[1]->type : TensorType{}};
    out.type = infer_reshape(node, std::span<const TensorType>(types, in.size()));
  }
  return out;
}

TensorType infer_same(const Node&, std::span<const TensorType> in) { return in[0]; }

std::vector<Tensor> grad_identity(const Node&, std::span<const Tensor>, Tensor, Tensor dy) { return {dy}; }
std::vector<Tensor> grad_stop(const Node&, std::span<const Tensor>, Tensor, Tensor) { return {Tensor()}; }

// --- slice ---

std::vector<std::int64_t> slice_sizes(const SliceAttrs& a, const std::vector<std::int64_t>& dims) {
  if (a.begin.size() != dims.size() || a.size.size() != dims.size())
    fail("begin " + dims_string(a.begin) + " and size " + dims_string(a.size) + " need one entry per axis of " +
         dims_string(dims));
  std::vector<std::int64_t> out(dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t size = a.size[i] < 0 ? (dims[i] < 0 ? kUnknown : dims[i] - a.begin[i]) : a.size[i];
    if (a.begin[i] < 0 || (dims[i] >= 0 && size >= 0 && a.begin[i] + size > dims[i]))
      fail("slice begin " + dims_string(a.begin) + " size " + dims_string(a.size) + " is outside " + dims_string(dims));
    out[i] = size;
  }
  return out;
}

TensorType infer_slice(const Node& node, std::span<const TensorType> in) {
  return {in[0].dtype, slice_sizes(std::get<SliceAttrs>(node.attrs), in[0].dims)};
}

std::vector<Tensor> grad_slice(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const SliceAttrs& a = std::get<SliceAttrs>(node.attrs);
  return {dy.graph().add(OpKind::pad, {dy, in[0]}, PadAttrs{a.begin, {}})};
}

void lower_slice(LowerContext& ctx) {
  const SliceAttrs& a = ctx.attrs<SliceAttrs>();
  const std::vector<std::int64_t> strides = detail::strides_of(ctx.in_types[0].dims);
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < strides.size(); ++i) offset += a.begin[i] * strides[i];
  vk::copy(ctx.recording, {u32s(ctx.out_type.dims), u32s(strides), detail::u32(offset, ctx), 0, {}}, ctx.in[0],
           ctx.out);
}

// Calls fn(i, offset of multi-index `index` + origin in a tensor of strides) for each
// element of a region of `dims`: the reference's strided walk.
template <class Fn>
void for_each_index(const std::vector<std::int64_t>& dims, Fn fn) {
  std::vector<std::int64_t> index(dims.size(), 0);
  std::int64_t n = 1;
  for (std::int64_t d : dims) n *= d;
  for (std::int64_t i = 0; i < n; ++i) {
    fn(i, index);
    for (std::size_t d = dims.size(); d-- > 0;) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
}

std::int64_t offset_of(const std::vector<std::int64_t>& index, const std::vector<std::int64_t>& origin,
                       const std::vector<std::int64_t>& strides) {
  std::int64_t at = 0;
  for (std::size_t d = 0; d < index.size(); ++d) at += (index[d] + (origin.empty() ? 0 : origin[d])) * strides[d];
  return at;
}

RefTensor reference_slice(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const SliceAttrs& a = std::get<SliceAttrs>(node.attrs);
  const RefTensor& x = *in[0];
  RefTensor out = RefTensor::zeros({x.type.dtype, slice_sizes(a, x.type.dims)});
  const std::vector<std::int64_t> strides = detail::strides_of(x.type.dims);
  for_each_index(out.type.dims, [&](std::int64_t i, const std::vector<std::int64_t>& index) {
    out.values[static_cast<std::size_t>(i)] = x.values[static_cast<std::size_t>(offset_of(index, a.begin, strides))];
  });
  return out;
}

// --- pad: zeros around x; `after` from attrs or from a second input's dims ---

std::vector<std::int64_t> pad_after(const PadAttrs& a, std::span<const TensorType> in) {
  if (in.size() == 1) return a.after;
  std::vector<std::int64_t> after(in[0].dims.size());
  for (std::size_t i = 0; i < after.size(); ++i)
    after[i] = in[1].dims[i] < 0 || in[0].dims[i] < 0 ? kUnknown : in[1].dims[i] - in[0].dims[i] - a.before[i];
  return after;
}

TensorType infer_pad(const Node& node, std::span<const TensorType> in) {
  const PadAttrs& a = std::get<PadAttrs>(node.attrs);
  const std::vector<std::int64_t> after = pad_after(a, in);
  if (a.before.size() != in[0].dims.size() || after.size() != in[0].dims.size())
    fail("padding needs one entry per axis of " + to_string(in[0]));
  std::vector<std::int64_t> dims(in[0].dims.size());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    if (a.before[i] < 0 || (after[i] < 0 && after[i] != kUnknown)) fail("negative padding");
    dims[i] = in[0].dims[i] < 0 || after[i] < 0 ? kUnknown : in[0].dims[i] + a.before[i] + after[i];
  }
  if (in.size() == 2) dims = in[1].dims;
  return {in[0].dtype, dims};
}

std::vector<Tensor> grad_pad(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const PadAttrs& a = std::get<PadAttrs>(node.attrs);
  std::vector<std::int64_t> size(in[0].dims());
  std::vector<Tensor> out{slice(dy, a.before, size)};
  if (in.size() == 2) out.emplace_back();
  return out;
}

void lower_pad(LowerContext& ctx) {
  const PadAttrs& a = ctx.attrs<PadAttrs>();
  const std::vector<std::int64_t> strides = detail::strides_of(ctx.out_type.dims);
  std::int64_t offset = 0;
  for (std::size_t i = 0; i < strides.size(); ++i) offset += a.before[i] * strides[i];
  vk::fill(ctx.recording, ctx.out, static_cast<std::uint64_t>(ctx.out_type.numel()), 0.0f);
  vk::copy(ctx.recording,
           {u32s(ctx.in_types[0].dims), u32s(detail::strides_of(ctx.in_types[0].dims)), 0, detail::u32(offset, ctx),
            u32s(strides)},
           ctx.in[0], ctx.out);
}

RefTensor reference_pad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const PadAttrs& a = std::get<PadAttrs>(node.attrs);
  std::vector<TensorType> types;
  for (const RefTensor* t : in) types.push_back(t->type);
  RefTensor out = RefTensor::zeros(infer_pad(node, types));
  const std::vector<std::int64_t> strides = detail::strides_of(out.type.dims);
  for_each_index(in[0]->type.dims, [&](std::int64_t i, const std::vector<std::int64_t>& index) {
    out.values[static_cast<std::size_t>(offset_of(index, a.before, strides))] =
        in[0]->values[static_cast<std::size_t>(i)];
  });
  return out;
}

// --- concat ---

TensorType infer_concat(const Node& node, std::span<const TensorType> in) {
  if (in.empty()) fail("concat needs at least one input");
  const int axis = detail::normalize_axis(std::get<AxisAttrs>(node.attrs).axis, in[0].rank());
  std::vector<std::int64_t> dims = in[0].dims;
  for (std::size_t k = 1; k < in.size(); ++k) {
    if (in[k].rank() != in[0].rank() || in[k].dtype != in[0].dtype)
      fail("input " + std::to_string(k) + " " + to_string(in[k]) + " does not match " + to_string(in[0]));
    for (int d = 0; d < in[0].rank(); ++d) {
      const std::int64_t e = in[k].dims[static_cast<std::size_t>(d)];
      std::int64_t& total = dims[static_cast<std::size_t>(d)];
      if (d == axis)
        total = total < 0 || e < 0 ? kUnknown : total + e;
      else if (!detail::compatible(total, e))
        fail("input " + std::to_string(k) + " " + to_string(in[k]) + " differs from " + to_string(in[0]) +
             " off the concat axis");
      else if (total < 0)
        total = e;
    }
  }
  return {in[0].dtype, dims};
}

std::vector<Tensor> grad_concat(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const int axis = detail::normalize_axis(std::get<AxisAttrs>(node.attrs).axis, dy.rank());
  std::vector<Tensor> grads;
  std::int64_t at = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::vector<std::int64_t> begin(static_cast<std::size_t>(dy.rank()), 0),
        size(static_cast<std::size_t>(dy.rank()), -1);
    const std::int64_t extent = in[k].dims()[static_cast<std::size_t>(axis)];
    if (extent < 0 && k + 1 < in.size())
      throw Error(ErrorCode::unsupported, node.name +
                                              ": the gradient needs every input but the last to have a known "
                                              "extent along the concat axis");
    begin[static_cast<std::size_t>(axis)] = at;
    size[static_cast<std::size_t>(axis)] = extent;
    grads.push_back(slice(dy, begin, size));
    at += extent;
  }
  return grads;
}

void lower_concat(LowerContext& ctx) {
  const int axis = detail::normalize_axis(ctx.attrs<AxisAttrs>().axis, ctx.out_type.rank());
  const std::vector<std::int64_t> out_strides = detail::strides_of(ctx.out_type.dims);
  std::int64_t at = 0;
  for (std::size_t k = 0; k < ctx.in.size(); ++k) {
    const TensorType& t = ctx.in_types[k];
    vk::copy(ctx.recording,
             {u32s(t.dims), u32s(detail::strides_of(t.dims)), 0,
              detail::u32(at * out_strides[static_cast<std::size_t>(axis)], ctx), u32s(out_strides)},
             ctx.in[k], ctx.out);
    at += t.dims[static_cast<std::size_t>(axis)];
  }
}

RefTensor reference_concat(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  std::vector<TensorType> types;
  for (const RefTensor* t : in) types.push_back(t->type);
  RefTensor out = RefTensor::zeros(infer_concat(node, types));
  const int axis = detail::normalize_axis(std::get<AxisAttrs>(node.attrs).axis, out.type.rank());
  const std::vector<std::int64_t> strides = detail::strides_of(out.type.dims);
  std::vector<std::int64_t> origin(strides.size(), 0);
  for (const RefTensor* t : in) {
    for_each_index(t->type.dims, [&](std::int64_t i, const std::vector<std::int64_t>& index) {
      out.values[static_cast<std::size_t>(offset_of(index, origin, strides))] = t->values[static_cast<std::size_t>(i)];
    });
    origin[static_cast<std::size_t>(axis)] += t->type.dims[static_cast<std::size_t>(axis)];
  }
  return out;
}

// --- transpose ---

TensorType infer_transpose(const Node& node, std::span<const TensorType> in) {
  const std::vector<int>& perm = std::get<TransposeAttrs>(node.attrs).perm;
  std::vector<int> sorted(perm);
  std::sort(sorted.begin(), sorted.end());
  std::vector<int> expected(static_cast<std::size_t>(in[0].rank()));
  std::iota(expected.begin(), expected.end(), 0);
  if (sorted != expected) fail("perm is not a permutation of the " + std::to_string(in[0].rank()) + " axes");
  std::vector<std::int64_t> dims;
  for (int p : perm) dims.push_back(in[0].dims[static_cast<std::size_t>(p)]);
  return {in[0].dtype, dims};
}

std::vector<Tensor> grad_transpose(const Node& node, std::span<const Tensor>, Tensor, Tensor dy) {
  const std::vector<int>& perm = std::get<TransposeAttrs>(node.attrs).perm;
  std::vector<int> inverse(perm.size());
  for (std::size_t i = 0; i < perm.size(); ++i) inverse[static_cast<std::size_t>(perm[i])] = static_cast<int>(i);
  return {transpose(dy, inverse)};
}

std::vector<std::int64_t> permuted_strides(const std::vector<int>& perm, const std::vector<std::int64_t>& in_dims) {
  const std::vector<std::int64_t> s = detail::strides_of(in_dims);
  std::vector<std::int64_t> out;
  for (int p : perm) out.push_back(s[static_cast<std::size_t>(p)]);
  return out;
}

void lower_transpose(LowerContext& ctx) {
  const std::vector<int>& perm = ctx.attrs<TransposeAttrs>().perm;
  vk::copy(ctx.recording, {u32s(ctx.out_type.dims), u32s(permuted_strides(perm, ctx.in_types[0].dims)), 0, 0, {}},
           ctx.in[0], ctx.out);
}

RefTensor reference_transpose(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const std::vector<int>& perm = std::get<TransposeAttrs>(node.attrs).perm;
  RefTensor out = RefTensor::zeros(infer_transpose(node, std::span<const TensorType>(&in[0]->type, 1)));
  const std::vector<std::int64_t> strides = permuted_strides(perm, in[0]->type.dims);
  for_each_index(out.type.dims, [&](std::int64_t i, const std::vector<std::int64_t>& index) {
    out.values[static_cast<std::size_t>(i)] = in[0]->values[static_cast<std::size_t>(offset_of(index, {}, strides))];
  });
  return out;
}

// --- broadcast_to: dims from attrs, or from a second input ---

TensorType infer_broadcast_to(const Node& node, std::span<const TensorType> in) {
  const std::vector<std::int64_t>& target = in.size() == 2 ? in[1].dims : std::get<DimsAttrs>(node.attrs).dims;
  const std::vector<std::int64_t> dims = broadcast_dims(in[0].dims, target);
  if (dims.size() != target.size()) fail("cannot broadcast " + to_string(in[0]) + " to " + dims_string(target));
  for (std::size_t i = 0; i < dims.size(); ++i)
    if (!detail::compatible(dims[i], target[i]))
      fail("cannot broadcast " + to_string(in[0]) + " to " + dims_string(target));
  return {in[0].dtype, target};
}

std::vector<Tensor> grad_broadcast_to(const Node&, std::span<const Tensor> in, Tensor, Tensor dy) {
  std::vector<Tensor> out{detail::sum_to(dy, in[0])};
  if (in.size() == 2) out.emplace_back();
  return out;
}

void lower_broadcast_to(LowerContext& ctx) {
  vk::copy(
      ctx.recording,
      {u32s(ctx.out_type.dims), u32s(detail::broadcast_strides(ctx.in_types[0].dims, ctx.out_type.dims)), 0, 0, {}},
      ctx.in[0], ctx.out);
}

RefTensor reference_broadcast_to(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  std::vector<TensorType> types;
  for (const RefTensor* t : in) types.push_back(t->type);
  RefTensor out = RefTensor::zeros(infer_broadcast_to(node, types));
  const std::vector<std::int64_t> strides = detail::broadcast_strides(in[0]->type.dims, out.type.dims);
  for_each_index(out.type.dims, [&](std::int64_t i, const std::vector<std::int64_t>& index) {
    out.values[static_cast<std::size_t>(i)] = in[0]->values[static_cast<std::size_t>(offset_of(index, {}, strides))];
  });
  return out;
}

}  // namespace

extern const OpDef reshape_op{OpKind::reshape, "reshape", infer_reshape,  grad_reshape,
                              nullptr,         nullptr,   reference_view, true};
extern const OpDef identity_op{OpKind::identity, "identity", infer_same,     grad_identity,
                               nullptr,          nullptr,    reference_view, true};
extern const OpDef stop_gradient_op{
    OpKind::stop_gradient, "stop_gradient", infer_same, grad_stop, nullptr, nullptr, reference_view, true};
// Float16 (OpDef::f16): shape ops are strided copies (pad also a fill) of either width;
// pad and broadcast_to read their second input's shape only.
extern const OpDef slice_op{.kind = OpKind::slice,
                            .name = "slice",
                            .infer = infer_slice,
                            .grad = grad_slice,
                            .lower = lower_slice,
                            .workspace = nullptr,
                            .reference = reference_slice,
                            .f16 = {0b1, true}};
extern const OpDef pad_op{.kind = OpKind::pad,
                          .name = "pad",
                          .infer = infer_pad,
                          .grad = grad_pad,
                          .lower = lower_pad,
                          .workspace = nullptr,
                          .reference = reference_pad,
                          .f16 = {0b11, true}};
extern const OpDef concat_op{.kind = OpKind::concat,
                             .name = "concat",
                             .infer = infer_concat,
                             .grad = grad_concat,
                             .lower = lower_concat,
                             .workspace = nullptr,
                             .reference = reference_concat,
                             .f16 = {~0u, true}};
extern const OpDef transpose_op{.kind = OpKind::transpose,
                                .name = "transpose",
                                .infer = infer_transpose,
                                .grad = grad_transpose,
                                .lower = lower_transpose,
                                .workspace = nullptr,
                                .reference = reference_transpose,
                                .f16 = {0b1, true}};
extern const OpDef broadcast_to_op{.kind = OpKind::broadcast_to,
                                   .name = "broadcast_to",
                                   .infer = infer_broadcast_to,
                                   .grad = grad_broadcast_to,
                                   .lower = lower_broadcast_to,
                                   .workspace = nullptr,
                                   .reference = reference_broadcast_to,
                                   .f16 = {0b11, true}};

Tensor reshape(Tensor x, std::vector<std::int64_t> dims) {
  return x.graph().add(OpKind::reshape, {x}, DimsAttrs{std::move(dims)});
}

Tensor flatten(Tensor x) {
  if (x.rank() < 1) throw Error(ErrorCode::invalid_argument, "flatten: " + x.name() + " has rank 0");
  std::int64_t rest = 1;
  for (int i = 1; i < x.rank(); ++i)
    rest =
        rest < 0 || x.dims()[static_cast<std::size_t>(i)] < 0 ? kUnknown : rest * x.dims()[static_cast<std::size_t>(i)];
  if (rest < 0)
    throw Error(ErrorCode::invalid_argument,
                "flatten: " + x.name() + " " + to_string(x.type()) + " has unknown extents past the first");
  return reshape(x, {-1, rest});
}

Tensor identity(Tensor x, const std::string& name) { return x.graph().add(OpKind::identity, {x}, NoAttrs{}, name); }
Tensor stop_gradient(Tensor x) { return x.graph().add(OpKind::stop_gradient, {x}); }

Tensor slice(Tensor x, std::vector<std::int64_t> begin, std::vector<std::int64_t> size) {
  return x.graph().add(OpKind::slice, {x}, SliceAttrs{std::move(begin), std::move(size)});
}

Tensor concat(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw Error(ErrorCode::invalid_argument, "concat: no inputs");
  if (xs.size() == 1) return xs[0];
  return xs[0].graph().add(OpKind::concat, xs, AxisAttrs{axis});
}

Tensor transpose(Tensor x, std::vector<int> perm) {
  return x.graph().add(OpKind::transpose, {x}, TransposeAttrs{std::move(perm)});
}

Tensor broadcast_to(Tensor x, std::vector<std::int64_t> dims) {
  return x.graph().add(OpKind::broadcast_to, {x}, DimsAttrs{std::move(dims)});
}

Tensor pad(Tensor x, std::vector<std::int64_t> before, std::vector<std::int64_t> after) {
  return x.graph().add(OpKind::pad, {x}, PadAttrs{std::move(before), std::move(after)});
}

// --- stack, unstack, split: slices, reshapes and a concat ---

Tensor stack(const std::vector<Tensor>& xs, int axis) {
  if (xs.empty()) throw Error(ErrorCode::invalid_argument, "stack: no inputs");
  const int rank = xs[0].rank();
  const int at = detail::normalize_axis(axis, rank + 1);
  std::vector<Tensor> expanded;
  for (const Tensor& x : xs) {
    if (x.dims() != xs[0].dims())
      throw Error(ErrorCode::invalid_argument,
                  "stack: inputs differ in shape: " + to_string(xs[0].type()) + " and " + to_string(x.type()));
    std::vector<std::int64_t> dims = detail::reshape_target(x.dims(), "stack");
    dims.insert(dims.begin() + at, 1);
    expanded.push_back(reshape(x, dims));
  }
  if (expanded.size() == 1) return expanded[0];
  return concat(expanded, at);
}

std::vector<Tensor> split(Tensor x, const std::vector<std::int64_t>& sizes, int axis) {
  const int at = detail::normalize_axis(axis, x.rank());
  const std::int64_t extent = x.dims()[static_cast<std::size_t>(at)];
  std::int64_t total = 0;
  for (std::int64_t s : sizes) {
    if (s < 1) throw Error(ErrorCode::invalid_argument, "split: sizes must be positive, got " + std::to_string(s));
    total += s;
  }
  if (extent < 0 || total != extent)
    throw Error(ErrorCode::invalid_argument,
                "split: sizes sum to " + std::to_string(total) + " but axis " + std::to_string(at) + " of " +
                    to_string(x.type()) + " has " +
                    (extent < 0 ? std::string("an unknown extent") : std::to_string(extent)));
  std::vector<Tensor> parts;
  std::vector<std::int64_t> begin(static_cast<std::size_t>(x.rank()), 0), size(static_cast<std::size_t>(x.rank()), -1);
  for (std::int64_t s : sizes) {
    size[static_cast<std::size_t>(at)] = s;
    parts.push_back(sizes.size() == 1 ? x : slice(x, begin, size));
    begin[static_cast<std::size_t>(at)] += s;
  }
  return parts;
}

std::vector<Tensor> split(Tensor x, int parts, int axis) {
  const int at = detail::normalize_axis(axis, x.rank());
  const std::int64_t extent = x.dims()[static_cast<std::size_t>(at)];
  if (parts < 1 || extent < 0 || extent % parts != 0)
    throw Error(ErrorCode::invalid_argument, "split: axis " + std::to_string(at) + " of " + to_string(x.type()) +
                                                 " does not divide into " + std::to_string(parts) + " equal parts");
  return split(x, std::vector<std::int64_t>(static_cast<std::size_t>(parts), extent / parts), axis);
}

std::vector<Tensor> unstack(Tensor x, int axis) {
  const int at = detail::normalize_axis(axis, x.rank());
  const std::int64_t extent = x.dims()[static_cast<std::size_t>(at)];
  if (extent < 1)
    throw Error(ErrorCode::invalid_argument,
                "unstack: axis " + std::to_string(at) + " of " + to_string(x.type()) + " must have a known extent");
  std::vector<std::int64_t> dims = detail::reshape_target(x.dims(), "unstack");
  dims.erase(dims.begin() + at);
  std::vector<Tensor> out;
  for (const Tensor& part : split(x, static_cast<int>(extent), at)) out.push_back(reshape(part, dims));
  return out;
}

}  // namespace vkp::graph
