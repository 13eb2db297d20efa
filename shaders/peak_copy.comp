#version 450
// peak_copy: the device's memory bandwidth (vkp::vk::measure_peak): dst = src, vec4 by
// vec4, each invocation striding over the whole array so that consecutive invocations
// touch consecutive addresses. Launch: (groups, 1, 1), any number of groups.
layout(local_size_x = 256) in;
layout(std430, binding = 0) readonly buffer Src { vec4 src[]; };
layout(std430, binding = 1) writeonly buffer Dst { vec4 dst[]; };
layout(push_constant) uniform Push {
  uint count;  // vec4s
} p;

void main() {
  const uint stride = gl_NumWorkGroups.x * 256;
  for (uint i = gl_GlobalInvocationID.x; i < p.count; i += stride) dst[i] = src[i];
}
