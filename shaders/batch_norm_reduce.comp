#version 450
// batch_norm_reduce: per-channel reductions of x viewed as [m, c] (channels last), in
// two passes with a fixed order (deterministic, no atomics):
//   pass 0, one invocation per (chunk of rows, channel), writes partial[chunk][channel][3]:
//     kMode 0 (statistics): count, mean and sum of squared deviations (Welford);
//     kMode 1 (gradient sums): sum dy and sum dy * xhat, xhat = (x - mean) / sqrt(var + eps);
//       with kRelu, dy counts as 0 where xhat * gamma + beta <= 0 (a ReLU followed);
//   pass 1 merges each channel's chunks into out[2][c]: with kTree (GPUs), one workgroup
//     per channel, invocation t merging the t-th of 64 runs of consecutive chunks in
//     order, then the 64 results merged pairwise in shared memory (t with t + 32, then t
//     with t + 16, ...); without (CPU devices), one invocation per channel, in order:
//     kMode 0: mean and biased variance (Chan et al.'s pairwise update);
//     kMode 1: sum dy and sum dy * xhat.
// With kTree a pass-0 invocation loads 4 rows before it adds them (in order), so that a
// GPU has 4 loads in flight, not one: the loop is latency-bound there.
// With kVec4 (c % 4 == 0, x and dy aligned), a pass-0 invocation takes 4 neighbouring
// channels as one vec4, the same arithmetic per channel in the same order (a CPU device
// loads a vec4 for the price of a float).
// x and dy may be float16 (f16_storage.glsl). Push constants mirror vkp::vk::BatchNormPush.
#extension GL_EXT_control_flow_attributes : require
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"

layout(local_size_x = 64) in;
layout(constant_id = 0) const uint kMode = 0;
layout(constant_id = 1) const uint kPass = 0;
layout(constant_id = 2) const bool kRelu = false;
layout(constant_id = 3) const bool kVec4 = false;
layout(constant_id = 4) const bool kTree = true;
const uint kRows = kTree ? 4 : 1;  // rows a pass-0 invocation loads at once (up to 4)

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, X, x)
VKP_TEXEL_INPUT4(1, Dy, dy)                                            // kMode 1
layout(std430, binding = 2) readonly buffer Stats { float stats[]; };  // kMode 1: mean [c], var [c]
layout(std430, binding = 3) buffer Partial { float partial[]; };       // [chunks][c][3]
layout(std430, binding = 4) writeonly buffer Out { float out_[]; };    // [2][c]
layout(std430, binding = 5) readonly buffer Gamma { float gamma[]; };  // kRelu
layout(std430, binding = 6) readonly buffer Beta { float beta[]; };    // kRelu
layout(push_constant) uniform Push {
  uint n;       // m * c
  uint c;
  uint chunk;   // rows per chunk
  float eps;
} p;

// Pass 0 over channels 4 j .. 4 j + 3 of one chunk (kVec4): as main's scalar loop, per
// component.
void partials4(uint index, uint m, uint chunks) {
  const uint c4 = p.c / 4;
  if (index >= chunks * c4) return;
  const uint j = index % c4, s = index / c4;
  const uint begin = s * p.chunk, end = min(m, begin + p.chunk);
  vec4 a = vec4(0.0), b = vec4(0.0);
  float count = 0.0;
  if (kMode == 0) {
    for (uint r0 = begin; r0 < end; r0 += kRows) {
      vec4 v[4];
      [[unroll]] for (uint q = 0; q < kRows; ++q) v[q] = r0 + q < end ? load4_x((r0 + q) * c4 + j) : vec4(0.0);
      [[unroll]] for (uint q = 0; q < kRows; ++q) {
        if (r0 + q >= end) break;
        count += 1.0;
        const vec4 delta = v[q] - a;
        a += delta / count;
        b += delta * (v[q] - a);
      }
    }
  } else {
    const uint ch = 4 * j;
    const vec4 mean = vec4(stats[ch], stats[ch + 1], stats[ch + 2], stats[ch + 3]);
    const vec4 var = vec4(stats[p.c + ch], stats[p.c + ch + 1], stats[p.c + ch + 2], stats[p.c + ch + 3]);
    const vec4 rstd = inversesqrt(var + p.eps);
    const vec4 gam = kRelu ? vec4(gamma[ch], gamma[ch + 1], gamma[ch + 2], gamma[ch + 3]) : vec4(0.0);
    const vec4 bet = kRelu ? vec4(beta[ch], beta[ch + 1], beta[ch + 2], beta[ch + 3]) : vec4(0.0);
    for (uint r0 = begin; r0 < end; r0 += kRows) {
      vec4 xs[4], gs[4];
      [[unroll]] for (uint q = 0; q < kRows; ++q) {
        const bool in_chunk = r0 + q < end;
        xs[q] = in_chunk ? load4_x((r0 + q) * c4 + j) : vec4(0.0);
        gs[q] = in_chunk ? load4_dy((r0 + q) * c4 + j) : vec4(0.0);
      }
      [[unroll]] for (uint q = 0; q < kRows; ++q) {
        if (r0 + q >= end) break;
        const vec4 xhat = (xs[q] - mean) * rstd;
        vec4 g = gs[q];
        if (kRelu) g = mix(vec4(0.0), g, greaterThan(xhat * gam + bet, vec4(0.0)));
        a += g;
        b += g * xhat;
      }
    }
  }
  for (uint e = 0; e < 4; ++e) {
    const uint at = 3 * (s * p.c + 4 * j + e);
    partial[at] = count;
    partial[at + 1] = a[e];
    partial[at + 2] = b[e];
  }
}

const uint kGroup = 64;  // local_size_x
shared vec3 merged[kGroup];  // pass 1: each invocation's (count, a, b)

// (count, a, b) with the partial `q` of the same layout added: kMode 0 by Chan et al.'s
// update of count, mean and sum of squared deviations (an empty side changes nothing),
// kMode 1 as two sums.
vec3 merge(vec3 s, vec3 q) {
  if (kMode != 0) return vec3(s.x, s.y + q.y, s.z + q.z);
  if (q.x == 0.0) return s;
  const float total = s.x + q.x, delta = q.y - s.y;
  return vec3(total, s.y + delta * q.x / total, s.z + (q.z + delta * delta * s.x * q.x / total));
}

// Channel ch's chunks [first, last) merged in order.
vec3 merged_chunks(uint ch, uint first, uint last) {
  vec3 s = vec3(0.0);
  for (uint k = first; k < last; ++k) {
    const uint at = 3 * (k * p.c + ch);
    s = merge(s, vec3(partial[at], partial[at + 1], partial[at + 2]));
  }
  return s;
}

// out[.][ch] from a channel's merged (count, a, b): mean and biased variance, or the sums.
void store(uint ch, vec3 s) {
  out_[ch] = s.y;
  out_[p.c + ch] = kMode == 0 ? s.z / s.x : s.z;
}

void main() {
  const uint index = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  const uint m = p.n / p.c, chunks = (m + p.chunk - 1) / p.chunk;
  if (kPass == 0 && kVec4) {
    partials4(index, m, chunks);
    return;
  }
  if (kPass == 0) {
    if (index >= chunks * p.c) return;
    const uint ch = index % p.c, s = index / p.c;
    const uint begin = s * p.chunk, end = min(m, begin + p.chunk);
    float a = 0.0, b = 0.0, count = 0.0;
    if (kMode == 0) {
      for (uint r0 = begin; r0 < end; r0 += kRows) {  // Welford: a = mean, b = sum of squared deviations
        float v[4];
        [[unroll]] for (uint q = 0; q < kRows; ++q) v[q] = r0 + q < end ? load_x((r0 + q) * p.c + ch) : 0.0;
        [[unroll]] for (uint q = 0; q < kRows; ++q) {
          if (r0 + q >= end) break;
          count += 1.0;
          const float delta = v[q] - a;
          a += delta / count;
          b += delta * (v[q] - a);
        }
      }
    } else {
      const float mean = stats[ch], rstd = inversesqrt(stats[p.c + ch] + p.eps);
      for (uint r0 = begin; r0 < end; r0 += kRows) {
        float xs[4], gs[4];
        [[unroll]] for (uint q = 0; q < kRows; ++q) {
          const bool in_chunk = r0 + q < end;
          xs[q] = in_chunk ? load_x((r0 + q) * p.c + ch) : 0.0;
          gs[q] = in_chunk ? load_dy((r0 + q) * p.c + ch) : 0.0;
        }
        [[unroll]] for (uint q = 0; q < kRows; ++q) {
          if (r0 + q >= end) break;
          // As batch_norm.comp computes xhat and the ReLU's input, operation for operation.
          const float xhat = (xs[q] - mean) * rstd;
          float g = gs[q];
          if (kRelu && !(xhat * gamma[ch] + beta[ch] > 0.0)) g = 0.0;
          a += g;
          b += g * xhat;
        }
      }
    }
    partial[3 * index] = count;
    partial[3 * index + 1] = a;
    partial[3 * index + 2] = b;
    return;
  }
  // Pass 1: serially, invocation `index` merges channel `index`'s chunks; with kTree,
  // workgroup ch does, its invocations a run of chunks each, then each other's results.
  if (!kTree) {
    if (index < p.c) store(index, merged_chunks(index, 0, chunks));
    return;
  }
  const uint ch = linear_group(), t = gl_LocalInvocationID.x;
  if (ch >= p.c) return;  // the whole workgroup: no barrier is skipped by part of one
  const uint per = (chunks + kGroup - 1) / kGroup, first = min(chunks, t * per);
  vec3 own = merged_chunks(ch, first, min(chunks, first + per));
  merged[t] = own;
  barrier();
  [[unroll]] for (uint half_ = kGroup / 2; half_ > 0; half_ /= 2) {
    if (t < half_) {
      own = merge(own, merged[t + half_]);
      merged[t] = own;
    }
    barrier();
  }
  if (t == 0) store(ch, own);
}
