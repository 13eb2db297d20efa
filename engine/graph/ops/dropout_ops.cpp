// dropout with a counter-based mask: (graph seed, the op's key, the global step) fix
// each element's draw, so the gradient reapplies the same mask without storing it, and
// a run resumed from a checkpoint draws the masks the uninterrupted run would have.
// Kernel: vk::dropout.
#include "core/rng.h"
#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/training.h"

namespace vkp::graph {
namespace {

TensorType infer_dropout(const Node& node, std::span<const TensorType> in) {
  detail::require_f32(in[0], "the input");
  const float rate = std::get<DropoutAttrs>(node.attrs).rate;
  if (!(rate >= 0.0f && rate < 1.0f)) detail::fail("rate " + std::to_string(rate) + " is outside [0, 1)");
  return in[0];
}

std::vector<Tensor> grad_dropout(const Node& node, std::span<const Tensor>, Tensor, Tensor dy) {
  return {dy.graph().add(OpKind::dropout, {dy}, node.attrs, "dropout_grad")};
}

void lower_dropout(LowerContext& ctx) {
  const DropoutAttrs& a = ctx.attrs<DropoutAttrs>();
  vk::dropout(ctx.recording, static_cast<std::uint64_t>(ctx.out_type.numel()), {a.rate, a.key, ctx.graph.seed()},
              ctx.in[0], ctx.scalars, ctx.out);
}

RefTensor reference_dropout(const Node& node, std::span<const RefTensor* const> in, RefState& state) {
  const DropoutAttrs& a = std::get<DropoutAttrs>(node.attrs);
  RefTensor out = *in[0];
  const auto step = static_cast<std::uint32_t>(state.scalars.at(Graph::kStepWord));
  const float scale = 1.0f / (1.0f - a.rate);
  for (std::size_t i = 0; i < out.values.size(); ++i) {
    const std::uint32_t bits =
        philox4x32({static_cast<std::uint32_t>(i), step, a.key, 0},
                   {static_cast<std::uint32_t>(state.seed), static_cast<std::uint32_t>(state.seed >> 32)})[0];
    const float u = static_cast<float>(bits >> 8) * 0x1.0p-24f;
    out.values[i] = u >= a.rate ? out.values[i] * scale : 0.0;
  }
  return out;
}

}  // namespace

// Float16 (OpDef::f16): x and y, either width.
extern const OpDef dropout_op{.kind = OpKind::dropout,
                              .name = "dropout",
                              .infer = infer_dropout,
                              .grad = grad_dropout,
                              .lower = lower_dropout,
                              .workspace = nullptr,
                              .reference = reference_dropout,
                              .f16 = {0b1, true}};

Tensor dropout(Tensor x, float rate) {
  Graph& g = x.graph();
  if (!g.tower().is_training || rate == 0.0f) return identity(x, "dropout");
  return g.add(OpKind::dropout, {x}, DropoutAttrs{rate, g.next_random_key()});
}

}  // namespace vkp::graph
