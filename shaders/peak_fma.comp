#version 450
// peak_fma: the device's float32 multiply-add rate (vkp::vk::measure_peak). Each
// invocation runs 4 independent vec4 chains x = fma(x, a, b) for 8 x p.iterations rounds
// (4 x 4 x 2 = 32 FLOPs a round, 8 rounds per trip of the loop, so that the loop's own
// count and branch weigh little): 16 multiply-adds in flight, which with a GPU's many
// invocations hides their latency, and which on a CPU driver (one SIMD register a
// component) fill its registers; then it writes the sum of its chains, so that nothing
// is optimized away.
// Lane l of chain c starts at 1 + (invocation % 97) / 1024 + c / 64 + l / 4096 (lanes
// that differ, so that no compiler folds a vec4 into one scalar chain); a = 0.999,
// b = 0.001 keep them near 1. Launch: (n / 256, 1, 1).
layout(local_size_x = 256) in;
layout(std430, binding = 0) writeonly buffer Out { float result[]; };
layout(push_constant) uniform Push {
  uint iterations;
  float a, b;
} p;

void main() {
  const uint i = gl_GlobalInvocationID.x;
  const vec4 start = 1.0 + float(i % 97u) / 1024.0 + vec4(0.0, 1.0, 2.0, 3.0) / 4096.0;
  vec4 x0 = start, x1 = start + 1.0 / 64.0, x2 = start + 2.0 / 64.0, x3 = start + 3.0 / 64.0;
  const vec4 a = vec4(p.a), b = vec4(p.b);
  for (uint r = 0; r < p.iterations; ++r) {
    for (uint u = 0; u < 8; ++u) {
      x0 = fma(x0, a, b);
      x1 = fma(x1, a, b);
      x2 = fma(x2, a, b);
      x3 = fma(x3, a, b);
    }
  }
  const vec4 s = (x0 + x1) + (x2 + x3);
  result[i] = (s.x + s.y) + (s.z + s.w);
}
