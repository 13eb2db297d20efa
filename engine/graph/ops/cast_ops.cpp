// cast between f32 and i32, and from u8 (images fed as bytes) to f32. Kernel: vk::cast.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/cast.h"

namespace vkp::graph {
namespace {

TensorType infer_cast(const Node& node, std::span<const TensorType> in) {
  const DType from = in[0].dtype, to = std::get<CastAttrs>(node.attrs).to;
  const bool supported = (from == DType::f32 && to == DType::i32) || (from == DType::i32 && to == DType::f32) ||
                         (from == DType::u8 && to == DType::f32) || (from == to && size_of(from) == 4);
  if (!supported)
    detail::fail("cast from " + std::string(to_string(from)) + " to " + std::string(to_string(to)) +
                 " is not supported (f32 <-> i32, u8 -> f32)");
  return {to, in[0].dims};
}

std::vector<Tensor> grad_cast(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  const bool float_to_float = in[0].dtype() == DType::f32 && std::get<CastAttrs>(node.attrs).to == DType::f32;
  return {float_to_float ? dy : Tensor()};
}

void lower_cast(LowerContext& ctx) {
  vk::cast(ctx.recording, ctx.in_types[0].dtype, ctx.out_type.dtype, static_cast<std::uint64_t>(ctx.out_type.numel()),
           ctx.in[0], ctx.out);
}

RefTensor reference_cast(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  RefTensor out = *in[0];
  out.type.dtype = std::get<CastAttrs>(node.attrs).to;
  if (out.type.dtype == DType::i32)
    for (double& v : out.values) v = std::trunc(v);
  return out;
}

}  // namespace

extern const OpDef cast_op{OpKind::cast, "cast", infer_cast, grad_cast, lower_cast, nullptr, reference_cast};

Tensor cast(Tensor x, DType to) {
  if (x.dtype() == to) return x;
  return x.graph().add(OpKind::cast, {x}, CastAttrs{to});
}

}  // namespace vkp::graph
