// The epilogue of gemm_regblock and gemm_tiled: what a GEMM does to each element of C
// before storing it, so that a layer's bias, residual and activation (or, backward,
// the activation's derivative) cost no pass of their own. In this order:
//   + bias[row * bias_row + col * bias_col]   (kBias; a vector along C's columns)
//   + extra[at]                               (kResidual; a tensor laid out as C)
//   f(v)                                      (kActivation = 1 + vkp::shaders::UnaryOp)
//   g(extra[at], v)                           (kGate = 1 + vkp::shaders::BinaryOp of an
//                                              activation's gradient: v times f' read
//                                              from extra, f's input or output)
// Its bindings may hold float16 (f16_storage.glsl, included first). Needs the push block `p` with bias_row, bias_col, act_alpha and gate_alpha, declared
// by the including shader before this file.
#include "elementwise_ops.glsl"

layout(constant_id = 20) const bool kBias = false;
layout(constant_id = 21) const bool kResidual = false;
layout(constant_id = 22) const uint kActivation = 0;
layout(constant_id = 23) const uint kGate = 0;

VKP_INPUT(3, Bias, bias)
VKP_INPUT(4, Extra, extra)

float activate(float v) { return unary_value(kActivation - 1, v, p.act_alpha); }

// u: the gate's element (the activation's input x or output y, as BinaryOp names it).
float gate(float u, float v) { return binary_value(kGate - 1, u, v, p.gate_alpha); }

float epilogue(float v, uint row, uint col, uint at) {
  if (kBias) v += load_bias(row * p.bias_row + col * p.bias_col);
  if (kResidual) v += load_extra(at);
  if (kActivation != 0) v = activate(v);
  if (kGate != 0) v = gate(load_extra(at), v);
  return v;
}
