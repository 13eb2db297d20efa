// The epilogue of gemm_regblock and gemm_tiled: what a GEMM does to each element of C
// before storing it, so that a layer's bias, residual and activation (or, backward,
// the activation's derivative) cost no pass of their own. In this order:
//   + bias[row * bias_row + col * bias_col]   (kBias; a vector along C's columns)
//   + extra[at]                               (kResidual; a tensor laid out as C)
//   f(v)                                      (kActivation = 1 + vkp::vk::UnaryOp)
//   g(extra[at], v)                           (kGate = 1 + vkp::vk::BinaryOp of an
//                                              activation's gradient: v times f' read
//                                              from extra, f's input or output)
// Needs the push block `p` with bias_row, bias_col, act_alpha and gate_alpha, declared
// by the including shader before this file.
layout(constant_id = 20) const bool kBias = false;
layout(constant_id = 21) const bool kResidual = false;
layout(constant_id = 22) const uint kActivation = 0;
layout(constant_id = 23) const uint kGate = 0;

layout(std430, binding = 3) readonly buffer Bias { float bias[]; };
layout(std430, binding = 4) readonly buffer Extra { float extra[]; };

float activate(float v) {
  switch (kActivation - 1) {
    case 0: return max(v, 0.0);                                                        // relu
    case 1: {                                                                          // sigmoid
      const float e = exp(-abs(v));
      return v >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
    }
    case 2: {                                                                          // tanh
      const float e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case 10: return v > 0.0 ? v : p.act_alpha * v;                                    // leaky_relu
    case 11: return v > 0.0 ? v : p.act_alpha * (exp(min(v, 0.0)) - 1.0);             // elu
  }
  return v;
}

// u: the gate's element (the activation's input x or output y, as BinaryOp names it).
float gate(float u, float v) {
  switch (kGate - 1) {
    case 7: return u > 0.0 ? v : 0.0;                     // relu_grad
    case 8: return v * u * (1.0 - u);                     // sigmoid_grad(y)
    case 9: return v * (1.0 - u * u);                     // tanh_grad(y)
    case 12: return u > 0.0 ? v : p.gate_alpha * v;       // leaky_relu_grad
    case 13: return u > 0.0 ? v : v * p.gate_alpha * exp(u);  // elu_grad(x)
  }
  return v;
}

float epilogue(float v, uint row, uint col, uint at) {
  if (kBias) v += bias[row * p.bias_row + col * p.bias_col];
  if (kResidual) v += extra[at];
  if (kActivation != 0) v = activate(v);
  if (kGate != 0) v = gate(extra[at], v);
  return v;
}
