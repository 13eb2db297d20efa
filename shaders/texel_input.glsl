// Inputs read through uniform texel buffers (the _texel builds: TEXEL in
// shaders/CMakeLists.txt). On lavapipe a storage-buffer load whose address differs
// across the SIMD lanes is a loop over the lanes with a branch per element; a texel
// fetch is a plain vector gather, 10-20x cheaper per vec4 (measured on Mesa 22.3). The
// host binds such an input as an R32G32B32A32_SFLOAT view, or R16G16B16A16_SFLOAT for a
// float16 slice (Recording::dispatch): the fetch returns float32 values either way, so
// the texel binding ignores kF16Bindings, and a float16 input needs no 16-bit feature.
// The slice is a whole number of vec4s (vk::texel_readable). A family in both the F16
// and TEXEL lists also has a _texel_f16 build, for its other bindings in float16.
//
//   VKP_TEXEL_INPUT4(b, Block, name)  float load_<name>(uint i), vec4 load4_<name>(uint i)
//
// as VKP_INPUT4 (f16_storage.glsl, included first) declares them; without VKP_TEXEL it
// is VKP_INPUT4.
//   VKP_TEXEL_WORDS(b, Block, name)   uint load_<name>(uint i): 32-bit words of any type,
//                                     bit for bit (an R32G32B32A32_UINT view)
//
// The buffers are declared samplerless (textureBuffer, read by texelFetch of
// GL_EXT_samplerless_texture_functions): SPIR-V 1.6, which Vulkan 1.3 drivers consume,
// no longer allows a sampled image of dimension Buffer (samplerBuffer), and Mesa 25's
// validation says so for every such kernel; both are uniform texel buffers to Vulkan.
#ifdef VKP_TEXEL
#extension GL_EXT_samplerless_texture_functions : require
#define VKP_TEXEL_WORDS(b, Block, name)                                                  \
  layout(binding = b) uniform utextureBuffer name##_texels;                               \
  uint load_##name(uint i) { return texelFetch(name##_texels, int(i / 4u))[i % 4u]; }
#define VKP_TEXEL_INPUT4(b, Block, name)                                                \
  layout(binding = b) uniform textureBuffer name##_texels;                               \
  vec4 load4_##name(uint i) { return texelFetch(name##_texels, int(i)); }                \
  float load_##name(uint i) { return texelFetch(name##_texels, int(i / 4u))[i % 4u]; }
#else
#define VKP_TEXEL_WORDS(b, Block, name)                                    \
  layout(std430, binding = b) readonly buffer Block { uint name[]; };      \
  uint load_##name(uint i) { return name[i]; }
#define VKP_TEXEL_INPUT4(b, Block, name) VKP_INPUT4(b, Block, name)
#endif
