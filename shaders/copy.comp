#version 450
// copy: strided gather-scatter of 32-bit words, up to 6 dims. For i over the region
// `dims` (row-major), with idx(i) its multi-index:
//   dst[dst_offset + sum_d idx_d * dst_strides[d]] = src[src_offset + sum_d idx_d * src_strides[d]]
// With these strides one kernel slices, permutes (transposes), broadcasts (stride 0),
// pads and concatenates (strided destinations). In the float16 build (f16_storage.glsl),
// a float16 side is converted to or from float32 (float16 to float16 is exact); the
// _f16p build holds it packed two to a word.
// In the _texel build (CPU devices, no float16 side) the source is read through an
// R32G32B32A32_UINT texel buffer, bit for bit; that build ignores VKP_F16, so the
// _texel_f16 build TEXEL implies is the same copy of words (the host does not use it: a
// float16 copy keeps storage buffers).
// Push constants mirror vkp::vk::CopyPush.
#extension GL_GOOGLE_include_directive : require
#if defined(VKP_TEXEL) && defined(VKP_F16)
#undef VKP_F16
#endif
#if defined(VKP_F16) && !defined(VKP_F16_PACKED)
#extension GL_EXT_shader_16bit_storage : require
#endif
#include "common.glsl"
#include "f16_storage.glsl"
#include "texel_input.glsl"

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint kPerInvocation = 4;

VKP_TEXEL_WORDS(0, Src, src)
layout(std430, binding = 1) writeonly buffer Dst { uint dst[]; };
#if defined(VKP_F16) && defined(VKP_F16_PACKED)
layout(std430, binding = 0) readonly buffer SrcH { uint src_h[]; };
layout(std430, binding = 1) buffer DstH { uint dst_h[]; };
#define LOAD_SRC_H(i) vkp_load_half(src_h, i)
#define STORE_DST_H(i, v) vkp_store_half(dst_h, i, v)
#elif defined(VKP_F16)
layout(std430, binding = 0) readonly buffer SrcH { float16_t src_h[]; };
layout(std430, binding = 1) writeonly buffer DstH { float16_t dst_h[]; };
#define LOAD_SRC_H(i) float(src_h[i])
#define STORE_DST_H(i, v) dst_h[i] = float16_t(v);
#endif
layout(push_constant) uniform Push {
  uint n;              // elements of the region
  uint rank;           // dims in use, 1..6
  uint src_offset;     // elements
  uint dst_offset;     // elements
  uint dims[6];        // extents of the region, outermost first
  uint src_strides[6];
  uint dst_strides[6];
} p;

void main() {
  const uint base = linear_group() * gl_WorkGroupSize.x * kPerInvocation + gl_LocalInvocationID.x;
  for (uint j = 0; j < kPerInvocation; ++j) {
    uint i = base + j * gl_WorkGroupSize.x;
    if (i >= p.n) return;
    uint from = p.src_offset, to = p.dst_offset;
    for (int d = int(p.rank) - 1; d >= 0; --d) {
      const uint at = i % p.dims[d];
      i /= p.dims[d];
      from += at * p.src_strides[d];
      to += at * p.dst_strides[d];
    }
#ifdef VKP_F16
    if (kF16Bindings != 0u) {
      const float v = VKP_F16_AT(0) ? LOAD_SRC_H(from) : uintBitsToFloat(load_src(from));
      if (VKP_F16_AT(1))
        STORE_DST_H(to, v)
      else
        dst[to] = floatBitsToUint(v);
      continue;
    }
#endif
    dst[to] = load_src(from);
  }
}
