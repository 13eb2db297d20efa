#version 450
// peak_copy: the device's memory bandwidth (vkp::vk::measure_peak): dst = src, vec4 by
// vec4, each invocation striding over the whole array so that consecutive invocations
// touch consecutive addresses. Launch: (groups, 1, 1), any number of groups.
// The _texel build (CPU devices) reads src through a texel view, as vkpack's kernels read
// their inputs there (texel_input.glsl): the shader copy is then the best a kernel's
// loads and stores can reach on that device.
layout(local_size_x = 256) in;
#ifdef VKP_TEXEL
#extension GL_EXT_samplerless_texture_functions : require
layout(binding = 0) uniform textureBuffer src_texels;
vec4 load_src(uint i) { return texelFetch(src_texels, int(i)); }
#else
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
vec4 load_src(uint i) { return src[i]; }
#endif
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push {
  uint count;  // vec4s
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * 256;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) dst[i] = load_src(i);
}
