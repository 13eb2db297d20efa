#version 450
// optimizer: one fused, in-place update of a variable from its gradient. kKind is a
// vkp::shaders::UpdateRule; op_codes.glsl (generated from shaders/op_codes.h) names its
// values VKP_RULE_SGD ... VKP_RULE_ADAGRAD.
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
// kVec4 (every slice 16-byte aligned): an invocation updates 4 consecutive elements with
// vec4 loads, and reads the hyperparameters once for the 4. On lavapipe every
// storage-buffer load is a loop over the lanes, the same-address loads of the words
// included: the MLP step's updates took 5.2 ms before this, 2.65 after.
// The _texel build (VKP_TEXEL, CPU devices, every slice whole vec4s) reads the four
// arrays through uniform texel views of the same slices (bindings 6-9) and writes them
// through bindings 0, 2 and 3: a texel fetch is a vector gather on lavapipe, a
// storage-buffer load a loop over the lanes. Each element is read before it is written,
// by the one invocation that owns it, so the two views of one slice never race.
// Push constants mirror vkp::vk::OptimizerPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"
#include "op_codes.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kKind = 0;
layout(constant_id = 1) const bool kGuarded = false;
layout(constant_id = 2) const bool kVec4 = false;

layout(std430, binding = 0) buffer Var { float v[]; };
layout(std430, binding = 1) readonly buffer Grad { float g[]; };
layout(std430, binding = 2) buffer Slot1 { float m[]; };  // momentum, adam's first moment, rms, accumulator
layout(std430, binding = 3) buffer Slot2 { float s[]; };  // adam's second moment, rmsprop's momentum
layout(std430, binding = 0) buffer Var4 { vec4 v4[]; };
layout(std430, binding = 1) readonly buffer Grad4 { vec4 g4[]; };
layout(std430, binding = 2) buffer Slot14 { vec4 m4[]; };
layout(std430, binding = 3) buffer Slot24 { vec4 s4[]; };
layout(std430, binding = 4) readonly buffer Scalars { uint scalars[]; };
layout(std430, binding = 5) readonly buffer Guard { float guard[]; };  // kGuarded
#ifdef VKP_TEXEL
#extension GL_EXT_samplerless_texture_functions : require
layout(binding = 6) uniform textureBuffer v_texels;
layout(binding = 7) uniform textureBuffer g_texels;
layout(binding = 8) uniform textureBuffer m_texels;
layout(binding = 9) uniform textureBuffer s_texels;
vec4 read_v4(uint i) { return texelFetch(v_texels, int(i)); }
vec4 read_g4(uint i) { return texelFetch(g_texels, int(i)); }
vec4 read_m4(uint i) { return texelFetch(m_texels, int(i)); }
vec4 read_s4(uint i) { return texelFetch(s_texels, int(i)); }
#else
vec4 read_v4(uint i) { return v4[i]; }
vec4 read_g4(uint i) { return g4[i]; }
vec4 read_m4(uint i) { return m4[i]; }
vec4 read_s4(uint i) { return s4[i]; }
#endif
layout(push_constant) uniform Push {
  uint n;
  uint lr, momentum, beta2, epsilon, weight_decay, step_factor;  // word offsets in the scalar buffer
} p;

float word(uint at) { return uintBitsToFloat(scalars[at]); }

bool uses_m() { return kKind != VKP_RULE_SGD; }
bool uses_s() { return kKind == VKP_RULE_ADAM || kKind == VKP_RULE_ADAMW || kKind == VKP_RULE_RMSPROP; }

// One update of up to four elements (componentwise: each lane of the vec4 is the
// scalar rule above).
void update(inout vec4 var, vec4 grad, inout vec4 m1, inout vec4 m2) {
  const float lr = word(p.lr);
  if (kKind == VKP_RULE_SGD) {
    var -= lr * grad;
  } else if (kKind == VKP_RULE_MOMENTUM || kKind == VKP_RULE_NESTEROV) {
    const float mu = word(p.momentum);
    m1 = mu * m1 + grad;
    var -= lr * (kKind == VKP_RULE_NESTEROV ? grad + mu * m1 : m1);
  } else if (kKind == VKP_RULE_RMSPROP) {
    const float rho = word(p.beta2), mu = word(p.momentum), eps = word(p.epsilon);
    m1 = rho * m1 + (1.0 - rho) * grad * grad;
    m2 = mu * m2 + lr * grad / sqrt(m1 + eps);
    var -= m2;
  } else if (kKind == VKP_RULE_ADAGRAD) {
    m1 = m1 + grad * grad;
    var -= lr * grad / sqrt(m1);
  } else {  // VKP_RULE_ADAM, VKP_RULE_ADAMW
    const float b1 = word(p.momentum), b2 = word(p.beta2), eps = word(p.epsilon), step = word(p.step_factor);
    m1 = b1 * m1 + (1.0 - b1) * grad;
    m2 = b2 * m2 + (1.0 - b2) * grad * grad;
    const vec4 old = var;
    vec4 updated = old - step * m1 / (sqrt(m2) + eps);
    if (kKind == VKP_RULE_ADAMW) updated -= lr * word(p.weight_decay) * old;
    var = updated;
  }
}

void main() {
  const uint i = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint first = kVec4 ? 4 * i : i;
  if (first >= p.n) return;
  if (kGuarded && guard[0] != 0.0) return;
  const float factor = kGuarded ? guard[1] : 1.0;
  if (kVec4 && first + 4 <= p.n) {
    vec4 var = read_v4(i), m1 = uses_m() ? read_m4(i) : vec4(0.0), m2 = uses_s() ? read_s4(i) : vec4(0.0);
    update(var, kGuarded ? read_g4(i) * factor : read_g4(i), m1, m2);
    v4[i] = var;
    if (uses_m()) m4[i] = m1;
    if (uses_s()) s4[i] = m2;
    return;
  }
  // One element (or, vectorized, the last 1 to 3).
  const uint count = min(kVec4 ? 4u : 1u, p.n - first);
  vec4 var = vec4(0.0), grad = vec4(0.0), m1 = vec4(0.0), m2 = vec4(0.0);
  for (uint e = 0; e < count; ++e) {
    var[e] = v[first + e];
    grad[e] = kGuarded ? g[first + e] * factor : g[first + e];
    if (uses_m()) m1[e] = m[first + e];
    if (uses_s()) m2[e] = s[first + e];
  }
  update(var, grad, m1, m2);
  for (uint e = 0; e < count; ++e) {
    v[first + e] = var[e];
    if (uses_m()) m[first + e] = m1[e];
    if (uses_s()) s[first + e] = m2[e];
  }
}
