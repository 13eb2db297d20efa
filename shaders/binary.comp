#version 450
// binary: c[i] = f(a[ia(i)], b[ib(i)]) with numpy broadcasting, f chosen by kOp (values
// of vkp::vk::BinaryOp). The output has `rank` dims (at most 6, after the host merged
// axes that broadcast alike); stride_a/stride_b are element strides, 0 along broadcast
// axes. kScalar replaces an operand by p.scalar: 1 = b is the scalar, 2 = a is.
// rank 1 with unit strides is the contiguous fast path. Push constants mirror
// vkp::vk::BinaryPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;
layout(constant_id = 2) const uint kOp = 0;
layout(constant_id = 3) const uint kScalar = 0;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer C { float c[]; };
layout(push_constant) uniform Push {
  uint n;
  uint rank;
  uint dims[6];
  uint stride_a[6];
  uint stride_b[6];
  float scalar;
} p;

// numpy's power: negative bases with integral exponents keep their sign.
float power(float x, float y) {
  if (x > 0.0) return pow(x, y);
  if (x == 0.0) return y > 0.0 ? 0.0 : (y == 0.0 ? 1.0 : 1.0 / 0.0);
  if (y != floor(y)) return 0.0 / 0.0;
  const float r = pow(-x, y);
  return mod(y, 2.0) == 1.0 ? -r : r;
}

float apply(float u, float v) {
  switch (kOp) {
    case 0: return u + v;
    case 1: return u - v;
    case 2: return u * v;
    case 3: return u / v;
    case 4: return max(u, v);
    case 5: return min(u, v);
    case 6: return power(u, v);
  }
  return u;
}

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    const uint i = base + j * gl_WorkGroupSize.x;
    if (i >= p.n) continue;
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
    const float u = kScalar == 2 ? p.scalar : a[ia];
    const float v = kScalar == 1 ? p.scalar : b[ib];
    c[i] = apply(u, v);
  }
}
