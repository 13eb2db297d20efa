// lstm_cell: one step of TensorFlow's LSTMCell on its preactivations, fused (one kernel
// for the gate math of a step), and lstm_cell_grad, its gradient for the preactivations
// or for the previous state. The recurrent matmul stays a matmul: the LSTM layer
// (sequence_layers.h) unrolls cells and matmuls over time. Kernel: vk::lstm_cell.
#include <cmath>

#include "engine/graph/graph.h"
#include "engine/graph/internal/op_def.h"
#include "engine/graph/ops.h"
#include "engine/graph/ops/internal/op_util.h"
#include "engine/vk/kernels/lstm_cell.h"

namespace vkp::graph {
namespace {

// z [B, 4U] and state [B, 2U]; returns U.
std::int64_t check_cell(const TensorType& z, const TensorType& state) {
  detail::require_f32(z, "z");
  detail::require_f32(state, "the state");
  if (z.rank() != 2 || state.rank() != 2 || z.dim(1) < 0 || z.dim(1) % 4 != 0)
    detail::fail("z must be [batch, 4 units] and the state [batch, 2 units], got " + to_string(z) + " and " +
                 to_string(state));
  const std::int64_t units = z.dim(1) / 4;
  if (!detail::compatible(state.dim(0), z.dim(0)) || state.dim(1) != 2 * units)
    detail::fail("the state " + to_string(state) + " does not match z " + to_string(z) + " (want [batch, " +
                 std::to_string(2 * units) + "])");
  return units;
}

TensorType infer_cell(const Node&, std::span<const TensorType> in) {
  check_cell(in[0], in[1]);
  return f32({in[0].dim(0) >= 0 ? in[0].dim(0) : in[1].dim(0), in[1].dim(1)});
}

LstmCellAttrs grad_attrs(const Node& node, bool state) {
  LstmCellAttrs a = std::get<LstmCellAttrs>(node.attrs);
  a.state_gradient = state;
  return a;
}

std::vector<Tensor> grad_cell(const Node& node, std::span<const Tensor> in, Tensor, Tensor dy) {
  Graph& g = in[0].graph();
  return {g.add(OpKind::lstm_cell_grad, {in[0], in[1], dy}, grad_attrs(node, false), "lstm_cell_gates_grad"),
          g.add(OpKind::lstm_cell_grad, {in[0], in[1], dy}, grad_attrs(node, true), "lstm_cell_state_grad")};
}

vk::LstmCellPush push(const LowerContext& ctx) {
  const std::int64_t units = ctx.in_types[0].dim(1) / 4;
  return {detail::u32(ctx.in_types[0].dim(0), ctx), detail::u32(units, ctx), ctx.attrs<LstmCellAttrs>().forget_bias};
}

void lower_cell(LowerContext& ctx) {
  vk::lstm_cell(ctx.recording, vk::LstmCellPart::step, push(ctx), {ctx.in[0], ctx.in[1], ctx.in[0], ctx.out});
}

double sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// The quantities of one cell (row b, unit u), in double.
struct Cell {
  double si, tj, sf, so, c_prev, c, tc;
};

Cell cell_at(const RefTensor& z, const RefTensor& state, std::int64_t b, std::int64_t u, std::int64_t units,
             double forget_bias) {
  const auto zv = [&](std::int64_t gate) {
    return z.values[static_cast<std::size_t>(b * 4 * units + gate * units + u)];
  };
  Cell k;
  k.si = sigmoid(zv(0));
  k.tj = std::tanh(zv(1));
  k.sf = sigmoid(zv(2) + forget_bias);
  k.so = sigmoid(zv(3));
  k.c_prev = state.values[static_cast<std::size_t>(b * 2 * units + u)];
  k.c = k.sf * k.c_prev + k.si * k.tj;
  k.tc = std::tanh(k.c);
  return k;
}

RefTensor reference_cell(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const std::int64_t batch = in[0]->type.dim(0), units = in[0]->type.dim(1) / 4;
  RefTensor out = RefTensor::zeros(in[1]->type);
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t u = 0; u < units; ++u) {
      const Cell k = cell_at(*in[0], *in[1], b, u, units, std::get<LstmCellAttrs>(node.attrs).forget_bias);
      out.values[static_cast<std::size_t>(b * 2 * units + u)] = k.c;
      out.values[static_cast<std::size_t>(b * 2 * units + units + u)] = k.so * k.tc;
    }
  return out;
}

// Inputs: z, state, ds.
TensorType infer_cell_grad(const Node& node, std::span<const TensorType> in) {
  const TensorType next = infer_cell(node, in.subspan(0, 2));
  detail::require_f32(in[2], "ds");
  if (in[2].rank() != 2 || !detail::compatible(in[2].dim(0), next.dim(0)) || in[2].dim(1) != next.dim(1))
    detail::fail("ds " + to_string(in[2]) + " does not match the state " + to_string(next));
  return std::get<LstmCellAttrs>(node.attrs).state_gradient ? in[1] : in[0];
}

void lower_cell_grad(LowerContext& ctx) {
  const vk::LstmCellPart part =
      ctx.attrs<LstmCellAttrs>().state_gradient ? vk::LstmCellPart::state_grad : vk::LstmCellPart::gates_grad;
  vk::lstm_cell(ctx.recording, part, push(ctx), {ctx.in[0], ctx.in[1], ctx.in[2], ctx.out});
}

RefTensor reference_cell_grad(const Node& node, std::span<const RefTensor* const> in, RefState&) {
  const LstmCellAttrs& a = std::get<LstmCellAttrs>(node.attrs);
  const std::int64_t batch = in[0]->type.dim(0), units = in[0]->type.dim(1) / 4;
  RefTensor out = RefTensor::zeros(a.state_gradient ? in[1]->type : in[0]->type);
  const auto at = [](std::int64_t i) { return static_cast<std::size_t>(i); };
  for (std::int64_t b = 0; b < batch; ++b)
    for (std::int64_t u = 0; u < units; ++u) {
      const Cell k = cell_at(*in[0], *in[1], b, u, units, a.forget_bias);
      const double dh = in[2]->values[at(b * 2 * units + units + u)];
      const double dc = in[2]->values[at(b * 2 * units + u)] + dh * k.so * (1 - k.tc * k.tc);
      if (a.state_gradient) {
        out.values[at(b * 2 * units + u)] = dc * k.sf;
        continue;
      }
      const std::int64_t row = b * 4 * units;
      out.values[at(row + u)] = dc * k.tj * k.si * (1 - k.si);
      out.values[at(row + units + u)] = dc * k.si * (1 - k.tj * k.tj);
      out.values[at(row + 2 * units + u)] = dc * k.c_prev * k.sf * (1 - k.sf);
      out.values[at(row + 3 * units + u)] = dh * k.tc * k.so * (1 - k.so);
    }
  return out;
}

}  // namespace

extern const OpDef lstm_cell_op{OpKind::lstm_cell, "lstm_cell", infer_cell,    grad_cell,
                                lower_cell,        nullptr,     reference_cell};
// Second derivatives through the cell are not implemented (grad nullptr).
extern const OpDef lstm_cell_grad_op{OpKind::lstm_cell_grad, "lstm_cell_grad", infer_cell_grad,    nullptr,
                                     lower_cell_grad,        nullptr,          reference_cell_grad};

Tensor lstm_cell(Tensor z, Tensor state, float forget_bias) {
  LstmCellAttrs a;
  a.forget_bias = forget_bias;
  return z.graph().add(OpKind::lstm_cell, {z, state}, a, "lstm_cell");
}

}  // namespace vkp::graph
