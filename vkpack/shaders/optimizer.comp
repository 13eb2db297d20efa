#version 450
// optimizer: one fused, in-place update of a variable from its gradient. kKind
// (vkp::graph::OptimizerKind): 0 sgd, 1 momentum, 2 nesterov, 3 adam, 4 adamw,
// 5 rmsprop, 6 adagrad.
// Hyperparameters are read from the scalar buffer at the word offsets in the push
// constants, so they change between steps without re-recording. Adam's step size
// lr sqrt(1 - b2^t) / (1 - b1^t) is not computed here (f32 pow is a few ulps off): the
// session computes it in double each step (graph::adam_step_factor) into a word.
//   sgd       v -= lr g
//   momentum  m = mu m + g;  v -= lr m                 (TensorFlow's MomentumOptimizer)
//   nesterov  m = mu m + g;  v -= lr (g + mu m)
//   adam      m = b1 m + (1-b1) g;  s = b2 s + (1-b2) g^2;
//             v -= step_factor m / (sqrt(s) + eps)
//   adamw     adam, then v -= lr wd v_old (decoupled weight decay)
//   rmsprop   ms = rho ms + (1-rho) g^2;  mom = mu mom + lr g / sqrt(ms + eps);  v -= mom
//             (TensorFlow's RMSPropOptimizer, not centered; rho is the word at beta2)
//   adagrad   acc += g^2;  v -= lr g / sqrt(acc)   (TensorFlow's AdagradOptimizer)
// kGuarded (dynamic loss scaling): guard = {count of non-finite gradient elements,
// factor}; a count other than 0 skips the update (the variable and its slots keep their
// values), else the gradient is g * factor (factor = 1 / loss scale).
// Push constants mirror vkp::vk::OptimizerPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kKind = 0;
layout(constant_id = 1) const bool kGuarded = false;

layout(std430, binding = 0) buffer Var { float v[]; };
layout(std430, binding = 1) readonly buffer Grad { float g[]; };
layout(std430, binding = 2) buffer Slot1 { float m[]; };  // momentum, adam's first moment, rms, accumulator
layout(std430, binding = 3) buffer Slot2 { float s[]; };  // adam's second moment, rmsprop's momentum
layout(std430, binding = 4) readonly buffer Scalars { uint scalars[]; };
layout(std430, binding = 5) readonly buffer Guard { float guard[]; };  // kGuarded
layout(push_constant) uniform Push {
  uint n;
  uint lr, momentum, beta2, epsilon, weight_decay, step_factor;  // word offsets in the scalar buffer
} p;

float word(uint at) { return uintBitsToFloat(scalars[at]); }

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= p.n) return;
  if (kGuarded && guard[0] != 0.0) return;
  const float lr = word(p.lr), grad = kGuarded ? g[i] * guard[1] : g[i];
  if (kKind == 0) {
    v[i] -= lr * grad;
  } else if (kKind <= 2) {
    const float mu = word(p.momentum);
    const float acc = mu * m[i] + grad;
    m[i] = acc;
    v[i] -= lr * (kKind == 2 ? grad + mu * acc : acc);
  } else if (kKind == 5) {
    const float rho = word(p.beta2), mu = word(p.momentum), eps = word(p.epsilon);
    const float ms = rho * m[i] + (1.0 - rho) * grad * grad;
    const float mom = mu * s[i] + lr * grad / sqrt(ms + eps);
    m[i] = ms;
    s[i] = mom;
    v[i] -= mom;
  } else if (kKind == 6) {
    const float acc = m[i] + grad * grad;
    m[i] = acc;
    v[i] -= lr * grad / sqrt(acc);
  } else {
    const float b1 = word(p.momentum), b2 = word(p.beta2), eps = word(p.epsilon), step = word(p.step_factor);
    const float m1 = b1 * m[i] + (1.0 - b1) * grad;
    const float m2 = b2 * s[i] + (1.0 - b2) * grad * grad;
    m[i] = m1;
    s[i] = m2;
    const float old = v[i];
    float updated = old - step * m1 / (sqrt(m2) + eps);
    if (kKind == 4) updated -= lr * word(p.weight_decay) * old;
    v[i] = updated;
  }
}
