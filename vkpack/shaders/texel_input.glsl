// Inputs read through uniform texel buffers (the _texel builds: TEXEL in
// shaders/CMakeLists.txt). On lavapipe a storage-buffer load whose address differs
// across the SIMD lanes is a loop over the lanes with a branch per element; a texel
// fetch is a plain vector gather, 10-20x cheaper per vec4 (measured on Mesa 22.3). The
// host binds such an input as an R32G32B32A32_SFLOAT view (Recording::dispatch), so it
// is float32, its slice a whole number of vec4s (vk::texel_readable).
//
//   VKP_TEXEL_INPUT4(b, Block, name)  float load_<name>(uint i), vec4 load4_<name>(uint i)
//
// as VKP_INPUT4 (f16_storage.glsl, included first) declares them; without VKP_TEXEL it
// is VKP_INPUT4.
#ifdef VKP_TEXEL
#define VKP_TEXEL_INPUT4(b, Block, name)                                                \
  layout(binding = b) uniform samplerBuffer name##_texels;                               \
  vec4 load4_##name(uint i) { return texelFetch(name##_texels, int(i)); }                \
  float load_##name(uint i) { return texelFetch(name##_texels, int(i / 4u))[i % 4u]; }
#else
#define VKP_TEXEL_INPUT4(b, Block, name) VKP_INPUT4(b, Block, name)
#endif
