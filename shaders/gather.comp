#version 450
// gather: rows of a table picked by indices, and the gradient of that, as segment sums.
// The table is [outer, rows, inner] (rows along the gathered axis), the indices `count`
// i32 values, the gathered tensor [outer, count, inner].
//   kGrad 0: out[o, k, i] = table[o, indices[k], i]; an index outside [0, rows) gives NaN
//            (the host checks fed indices before a step; a computed one must not read
//            out of bounds, and NaN makes it loud).
//   kGrad 1: dtable[o, r, i] = the sum of dy[o, k, i] over the k with indices[k] == r, in
//            increasing k: deterministic, no atomics. A workgroup owns 64 consecutive i of
//            one (o, r) and walks every index; each index is the same for the whole
//            workgroup (one load, a uniform branch), so only matching rows cost a read
//            of dy. Work grows with rows * count: cheap for a vocabulary of characters or
//            a few thousand words, not for a large one.
//   kGrad 2: the same sums, for CPU devices: an invocation owns one i of one o, zeroes
//            its column of dtable and walks the indices once, adding dy[o, k, i] into
//            dtable[o, indices[k], i] (its own column: no races, the same order, the
//            same float32 sums). Work grows with count only; on lavapipe kGrad 1 cost
//            120 ms of the char LSTM's step (256 rows x 2048 indices).
// Push constants mirror vkp::vk::GatherPush.
#extension GL_GOOGLE_include_directive : require
#include "common.glsl"

layout(local_size_x_id = 1) in;  // 64; kGrad 2: a few lanes, so that there are workgroups to share
layout(constant_id = 0) const uint kGrad = 0;

layout(std430, binding = 0) readonly buffer In { float in_[]; };  // the table, or dy
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
layout(std430, binding = 2) buffer Out { float out_[]; };  // kGrad 2 reads what it wrote
layout(push_constant) uniform Push {
  uint outer, rows, inner, count;
} p;

void forward() {
  const uint e = linear_group() * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (e >= p.outer * p.count * p.inner) return;
  const uint i = e % p.inner, k = (e / p.inner) % p.count, o = e / (p.inner * p.count);
  const int r = indices[k];
  out_[e] = r >= 0 && uint(r) < p.rows ? in_[(o * p.rows + uint(r)) * p.inner + i] : uintBitsToFloat(0x7fc00000u);
}

void gradient() {
  const uint chunks = (p.inner + gl_WorkGroupSize.x - 1) / gl_WorkGroupSize.x, g = linear_group();
  const uint chunk = g % chunks, r = (g / chunks) % p.rows, o = g / (chunks * p.rows);
  if (o >= p.outer) return;
  const uint i = chunk * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (i >= p.inner) return;
  float sum = 0.0;
  for (uint k = 0; k < p.count; ++k)
    if (indices[k] == int(r)) sum += in_[(o * p.count + k) * p.inner + i];
  out_[(o * p.rows + r) * p.inner + i] = sum;
}

void gradient_by_columns() {
  const uint chunks = (p.inner + gl_WorkGroupSize.x - 1) / gl_WorkGroupSize.x, g = linear_group();
  const uint o = g / chunks, i = (g % chunks) * gl_WorkGroupSize.x + gl_LocalInvocationID.x;
  if (o >= p.outer || i >= p.inner) return;
  const uint table = o * p.rows * p.inner + i;
  for (uint r = 0; r < p.rows; ++r) out_[table + r * p.inner] = 0.0;
  for (uint k = 0; k < p.count; ++k) {
    const int r = indices[k];
    if (r < 0 || uint(r) >= p.rows) continue;
    const uint at = table + uint(r) * p.inner;
    out_[at] = out_[at] + in_[(o * p.count + k) * p.inner + i];
  }
}

void main() {
  if (kGrad == 0)
    forward();
  else if (kGrad == 1)
    gradient();
  else
    gradient_by_columns();
}
