// The elementwise functions of vkp::shaders::UnaryOp and BinaryOp (shaders/op_codes.h)
// on one float, shared by binary.comp, the GEMM epilogue and elementwise_chain.comp
// (unary.comp keeps vec4 forms of the same formulas). `alpha`: leaky relu's slope, elu's
// alpha.

#include "op_codes.glsl"

// numpy's power: negative bases with integral exponents keep their sign.
float power(float x, float y) {
  if (x > 0.0) return pow(x, y);
  if (x == 0.0) return y > 0.0 ? 0.0 : (y == 0.0 ? 1.0 : 1.0 / 0.0);
  if (y != floor(y)) return 0.0 / 0.0;
  const float r = pow(-x, y);
  return mod(y, 2.0) == 1.0 ? -r : r;
}

// Without overflow for any x.
float sigmoid(float x) {
  const float e = exp(-abs(x));
  return x >= 0.0 ? 1.0 / (1.0 + e) : e / (1.0 + e);
}

// erfc by Numerical Recipes' Chebyshev fit (erfcc; relative error below 1.2e-7 for
// every z), and the standard normal distribution and density from it.
float erfc_fit(float z) {
  const float a = abs(z), t = 1.0 / (1.0 + 0.5 * a);
  const float poly = -1.26551223 + t * (1.00002368 + t * (0.37409196 + t * (0.09678418 + t * (-0.18628806 +
                     t * (0.27886807 + t * (-1.13520398 + t * (1.48851587 + t * (-0.82215223 + t * 0.17087277))))))));
  const float r = t * exp(-a * a + poly);
  return z >= 0.0 ? r : 2.0 - r;
}
float normal_cdf(float x) { return 0.5 * erfc_fit(-0.70710678118654752 * x); }
float normal_pdf(float x) { return 0.39894228040143268 * exp(-0.5 * x * x); }

float unary_value(uint op, float v, float alpha) {
  switch (op) {
    case VKP_UNARY_RELU: return max(v, 0.0);
    case VKP_UNARY_SIGMOID: return sigmoid(v);
    case VKP_UNARY_TANH: {  // tanh, no overflow
      const float e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case VKP_UNARY_EXP: return exp(v);
    case VKP_UNARY_LOG: return log(v);
    case VKP_UNARY_SQRT: return sqrt(v);
    case VKP_UNARY_RSQRT: return inversesqrt(v);
    case VKP_UNARY_NEG: return -v;
    case VKP_UNARY_ABS: return abs(v);
    case VKP_UNARY_SQUARE: return v * v;
    case VKP_UNARY_LEAKY_RELU: return v > 0.0 ? v : alpha * v;
    case VKP_UNARY_ELU: return v > 0.0 ? v : alpha * (exp(min(v, 0.0)) - 1.0);
    case VKP_UNARY_GELU: return v * normal_cdf(v);
    case VKP_UNARY_FLOOR: return floor(v);
    case VKP_UNARY_ROUND: return roundEven(v);  // round, halves to even
  }
  return v;
}

// u and v as vkp::shaders::BinaryOp names them.
float binary_value(uint op, float u, float v, float alpha) {
  switch (op) {
    case VKP_BINARY_ADD: return u + v;
    case VKP_BINARY_SUB: return u - v;
    case VKP_BINARY_MUL: return u * v;
    case VKP_BINARY_DIV: return u / v;
    case VKP_BINARY_MAX: return max(u, v);
    case VKP_BINARY_MIN: return min(u, v);
    case VKP_BINARY_POW: return power(u, v);
    case VKP_BINARY_RELU_GRAD: return u > 0.0 ? v : 0.0;  // relu_grad(x or y, dy)
    case VKP_BINARY_SIGMOID_GRAD: return v * u * (1.0 - u);  // sigmoid_grad(y, dy)
    case VKP_BINARY_TANH_GRAD: return v * (1.0 - u * u);  // tanh_grad(y, dy)
    case VKP_BINARY_SQRT_GRAD: return v * 0.5 / u;  // sqrt_grad(y, dy)
    case VKP_BINARY_RSQRT_GRAD: return -0.5 * v * u * u * u;  // rsqrt_grad(y, dy)
    case VKP_BINARY_LEAKY_RELU_GRAD: return u > 0.0 ? v : alpha * v;  // leaky_relu_grad(x, dy)
    case VKP_BINARY_ELU_GRAD: return u > 0.0 ? v : v * alpha * exp(u);  // elu_grad(x, dy)
    case VKP_BINARY_ABS_GRAD: return u > 0.0 ? v : (u < 0.0 ? -v : 0.0);  // abs_grad(x, dy)
    case VKP_BINARY_GREATER_EQUAL: return u >= v ? 1.0 : 0.0;
    case VKP_BINARY_EQUAL: return u == v ? 1.0 : 0.0;
    case VKP_BINARY_SIGMOID_XENT: return max(u, 0.0) - u * v + log(1.0 + exp(-abs(u)));  // sigmoid_xent(x, z)
    case VKP_BINARY_SIGMOID_XENT_GRAD: return sigmoid(u) - v;  // sigmoid_xent_grad(x, z)
    case VKP_BINARY_GELU_GRAD: return v * (normal_cdf(u) + u * normal_pdf(u));  // gelu_grad(x, dy)
    case VKP_BINARY_KEEP: return v != 0.0 ? u : 0.0;  // keep(a, mask)
  }
  return u;
}
