#version 450
// binary: c[i] = f(a[ia(i)], b[ib(i)]) with numpy broadcasting, f chosen by kOp (values
// of vkp::shaders::BinaryOp: arithmetic, unary gradients, comparisons, sigmoid cross entropy). The output has `rank` dims (at most 6, after the host merged
// axes that broadcast alike); stride_a/stride_b are element strides, 0 along broadcast
// axes. kScalar replaces an operand by p.scalar: 1 = b is the scalar, 2 = a is.
// Push constants mirror vkp::vk::BinaryPush.
//
// kVec4 is the contiguous path (rank 1, unit strides, 16-byte aligned operands): each
// invocation takes whole vec4s, which a CPU device loads for about the price of one
// float; the last n % 4 elements are done one by one.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "elementwise_ops.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const uint kScalar = 0;
layout(constant_id = 4) const bool kVec4 = false;

#include "f16_storage.glsl"
#include "texel_input.glsl"
VKP_TEXEL_INPUT4(0, A, a)
VKP_TEXEL_INPUT4(1, B, b)
VKP_OUTPUT4(2, C, c)
layout(push_constant) uniform Push {
  uint n;
  uint rank;
  uint dims[6];
  uint stride_a[6];
  uint stride_b[6];
  float scalar;
} p;

// u and v as vkp::shaders::BinaryOp names them; alpha is p.scalar.
float apply(float u, float v) { return binary_value(kOp, u, v, p.scalar); }

vec4 apply4(vec4 u, vec4 v) {
  switch (kOp) {
    case VKP_BINARY_ADD: return u + v;
    case VKP_BINARY_SUB: return u - v;
    case VKP_BINARY_MUL: return u * v;
    case VKP_BINARY_DIV: return u / v;
    case VKP_BINARY_MAX: return max(u, v);
    case VKP_BINARY_MIN: return min(u, v);
  }
  return vec4(apply(u.x, v.x), apply(u.y, v.y), apply(u.z, v.z), apply(u.w, v.w));
}

float element(uint i) {
  uint ia = i, ib = i;
  if (p.rank != 1 || p.stride_a[0] != 1 || p.stride_b[0] != 1) {
    ia = 0;
    ib = 0;
    uint rest = i;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint at = rest % p.dims[d];
      rest /= p.dims[d];
      ia += at * p.stride_a[d];
      ib += at * p.stride_b[d];
    }
  }
  return apply(kScalar == 2 ? p.scalar : load_a(ia), kScalar == 1 ? p.scalar : load_b(ib));
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  if (kVec4) {
    const uint n4 = p.n / 4;
    for (uint j = 0; j < kPerInvocation; ++j) {
      const uint q = base + j * gl_WorkGroupSize.x;
      if (q < n4) {
        store4_c(q, apply4(kScalar == 2 ? vec4(p.scalar) : load4_a(q), kScalar == 1 ? vec4(p.scalar) : load4_b(q)));
      } else if (q == n4) {
        for (uint i = 4 * n4; i < p.n; ++i) store_c(i, element(i));
      }
    }
    return;
  }
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i < p.n) store_c(i, element(i));
  }
}
