#version 450
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_NV_cooperative_matrix : require
// peak_matrix: the device's matrix-unit rate for float16 operands and float32 sums
// (vkp::vk::measure_peak, where VK_NV_cooperative_matrix offers 16 x 16 x 16), the
// ceiling that gemm_coopmat's rate is a share of. Each subgroup runs 4 independent
// accumulator chains acc = a * b + acc for 8 x p.iterations rounds (4 x 2 x 16^3 FLOPs a
// round; 8 rounds a trip of the loop), a and b 16 x 16 matrices of p.a and p.b, then
// stores its chains, 4 x 256 floats a subgroup, so that nothing is optimized away (not
// their sum: SPIRV-Tools 2023.1's optimizer crashes on a cooperative-matrix addition).
// With p.a = p.b = 1/64 every element grows by 16/4096 = 1/256 a product, exactly in
// float32: each stored element is 8 x p.iterations / 256 (peak_matrix_reference).
// Launch: (groups, 1, 1) of local_size_x (spec constant 0) invocations.
layout(local_size_x_id = 0) in;
layout(std430, binding = 0) writeonly buffer Out { float result[]; };
layout(push_constant) uniform Push {
  uint iterations;
  float a, b;
} p;

#define Half16 fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define Float16x16 fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>

void main() {
  const Half16 a = Half16(float16_t(p.a)), b = Half16(float16_t(p.b));
  Float16x16 acc0 = Float16x16(0.0), acc1 = Float16x16(0.0), acc2 = Float16x16(0.0), acc3 = Float16x16(0.0);
  for (uint r = 0; r < p.iterations; ++r) {
    for (uint u = 0; u < 8; ++u) {
      acc0 = coopMatMulAddNV(a, b, acc0);
      acc1 = coopMatMulAddNV(a, b, acc1);
      acc2 = coopMatMulAddNV(a, b, acc2);
      acc3 = coopMatMulAddNV(a, b, acc3);
    }
  }
  const uint at = (gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID) * 1024;
  coopMatStoreNV(acc0, result, at, 16, false);
  coopMatStoreNV(acc1, result, at + 256, 16, false);
  coopMatStoreNV(acc2, result, at + 512, 16, false);
  coopMatStoreNV(acc3, result, at + 768, 16, false);
}
