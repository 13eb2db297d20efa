// The elementwise functions of vkp::vk::UnaryOp and vkp::vk::BinaryOp on one float,
// shared by binary.comp, the GEMM epilogue and elementwise_chain.comp (unary.comp keeps
// vec4 forms of the same formulas). `alpha`: leaky relu's slope, elu's alpha.

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
    case 0: return max(v, 0.0);  // relu
    case 1: return sigmoid(v);
    case 2: {                    // tanh, no overflow
      const float e = exp(-2.0 * abs(v));
      return sign(v) * (1.0 - e) / (1.0 + e);
    }
    case 3: return exp(v);
    case 4: return log(v);
    case 5: return sqrt(v);
    case 6: return inversesqrt(v);
    case 7: return -v;
    case 8: return abs(v);
    case 9: return v * v;                                               // square
    case 10: return v > 0.0 ? v : alpha * v;                            // leaky_relu
    case 11: return v > 0.0 ? v : alpha * (exp(min(v, 0.0)) - 1.0);     // elu
    case 12: return v * normal_cdf(v);                                  // gelu
    case 13: return floor(v);
    case 14: return roundEven(v);                                       // round, halves to even
  }
  return v;
}

// u and v as vkp::vk::BinaryOp names them.
float binary_value(uint op, float u, float v, float alpha) {
  switch (op) {
    case 0: return u + v;
    case 1: return u - v;
    case 2: return u * v;
    case 3: return u / v;
    case 4: return max(u, v);
    case 5: return min(u, v);
    case 6: return power(u, v);
    case 7: return u > 0.0 ? v : 0.0;                                   // relu_grad(x or y, dy)
    case 8: return v * u * (1.0 - u);                                   // sigmoid_grad(y, dy)
    case 9: return v * (1.0 - u * u);                                   // tanh_grad(y, dy)
    case 10: return v * 0.5 / u;                                        // sqrt_grad(y, dy)
    case 11: return -0.5 * v * u * u * u;                               // rsqrt_grad(y, dy)
    case 12: return u > 0.0 ? v : alpha * v;                            // leaky_relu_grad(x, dy)
    case 13: return u > 0.0 ? v : v * alpha * exp(u);                   // elu_grad(x, dy)
    case 14: return u > 0.0 ? v : (u < 0.0 ? -v : 0.0);                 // abs_grad(x, dy)
    case 15: return u >= v ? 1.0 : 0.0;                                 // greater_equal
    case 16: return u == v ? 1.0 : 0.0;                                 // equal
    case 17: return max(u, 0.0) - u * v + log(1.0 + exp(-abs(u)));      // sigmoid_xent(x, z)
    case 18: return sigmoid(u) - v;                                     // sigmoid_xent_grad(x, z)
    case 19: return v * (normal_cdf(u) + u * normal_pdf(u));            // gelu_grad(x, dy)
    case 20: return v != 0.0 ? u : 0.0;                                 // keep(a, mask)
  }
  return u;
}
