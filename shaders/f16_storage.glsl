// Float16 storage (vkp::vk::BufferSlice::f16): a tensor kept in half precision is
// converted to float32 when a kernel loads it and back when it stores it; all arithmetic
// stays float32. A kernel family that accepts it opens with `#if defined(VKP_F16) &&
// !defined(VKP_F16_PACKED)` (enabling the 16-bit storage extension), and is therefore
// built three times (cmake/VkpackShaders.cmake): without VKP_F16 every binding is
// float32 and the module needs no 16-bit feature; with it, bit b of kF16Bindings says
// that binding b holds float16 values (the driver folds the choice when it specializes).
// The _f16 build reads and writes float16_t (storageBuffer16BitAccess); the _f16p build
// (VKP_F16_PACKED too), for devices without that feature, keeps the same bytes as 32-bit
// words of two halves (packHalf2x16, core GLSL): element i is half i % 2 of word i / 2,
// a lone half is written with atomicAnd + atomicOr so that two invocations writing the
// two halves of one word cannot lose either, and a vec4 is two whole words.
//
// The macros declare a float buffer `name` at binding b under every width, with
//   VKP_INPUT(b, Block, name)    float load_<name>(uint i)
//   VKP_INPUT4(b, Block, name)   and vec4 load4_<name>(uint i) (i counts vec4s)
//   VKP_OUTPUT(b, Block, name)   void store_<name>(uint i, float v)
//   VKP_OUTPUT4(b, Block, name)  and void store4_<name>(uint i, vec4 v)
//   VKP_INOUT(b, Block, name)    load_<name> and store_<name> on one buffer
// and vkp_load_half(words, i) / vkp_store_half(words, i, v) for a kernel that declares
// its packed words itself. The including shader enables GL_EXT_shader_16bit_storage
// under VKP_F16 but not VKP_F16_PACKED (an #extension must precede every declaration).
layout(constant_id = 40) const uint kF16Bindings = 0;

#if defined(VKP_F16) && defined(VKP_F16_PACKED)
#define VKP_F16_AT(b) ((kF16Bindings & (1u << (b))) != 0u)
#define vkp_load_half(words, i) unpackHalf2x16(words[(i) / 2u])[(i) % 2u]
#define vkp_store_half(words, i, v)                                                   \
  {                                                                                   \
    const uint vkp_shift_ = 16u * ((i) % 2u);                                         \
    atomicAnd(words[(i) / 2u], ~(0xffffu << vkp_shift_));                            \
    atomicOr(words[(i) / 2u], (packHalf2x16(vec2(v, 0.0)) & 0xffffu) << vkp_shift_); \
  }
#define VKP_INPUT(b, Block, name)                                                    \
  layout(std430, binding = b) readonly buffer Block { float name[]; };              \
  layout(std430, binding = b) readonly buffer Block##H { uint name##_h[]; };        \
  float load_##name(uint i) { return VKP_F16_AT(b) ? vkp_load_half(name##_h, i) : name[i]; }
#define VKP_INPUT4(b, Block, name)                                                        \
  VKP_INPUT(b, Block, name)                                                               \
  layout(std430, binding = b) readonly buffer Block##4 { vec4 name##4[]; };              \
  layout(std430, binding = b) readonly buffer Block##H4 { uvec2 name##_h4[]; };          \
  vec4 load4_##name(uint i) {                                                             \
    if (!VKP_F16_AT(b)) return name##4[i];                                                \
    const uvec2 w = name##_h4[i];                                                         \
    return vec4(unpackHalf2x16(w.x), unpackHalf2x16(w.y));                                \
  }
#define VKP_OUTPUT(b, Block, name)                                                   \
  layout(std430, binding = b) writeonly buffer Block { float name[]; };             \
  layout(std430, binding = b) buffer Block##H { uint name##_h[]; };                 \
  void store_##name(uint i, float v) {                                              \
    if (VKP_F16_AT(b)) vkp_store_half(name##_h, i, v) else name[i] = v;             \
  }
#define VKP_OUTPUT4(b, Block, name)                                                  \
  VKP_OUTPUT(b, Block, name)                                                         \
  layout(std430, binding = b) writeonly buffer Block##4 { vec4 name##4[]; };        \
  layout(std430, binding = b) writeonly buffer Block##H4 { uvec2 name##_h4[]; };    \
  void store4_##name(uint i, vec4 v) {                                              \
    if (VKP_F16_AT(b))                                                              \
      name##_h4[i] = uvec2(packHalf2x16(v.xy), packHalf2x16(v.zw));                 \
    else                                                                            \
      name##4[i] = v;                                                               \
  }
#define VKP_INOUT(b, Block, name)                                                    \
  layout(std430, binding = b) buffer Block { float name[]; };                       \
  layout(std430, binding = b) buffer Block##H { uint name##_h[]; };                 \
  float load_##name(uint i) { return VKP_F16_AT(b) ? vkp_load_half(name##_h, i) : name[i]; } \
  void store_##name(uint i, float v) {                                              \
    if (VKP_F16_AT(b)) vkp_store_half(name##_h, i, v) else name[i] = v;             \
  }
#elif defined(VKP_F16)
#define VKP_F16_AT(b) ((kF16Bindings & (1u << (b))) != 0u)
#define VKP_INPUT(b, Block, name)                                                    \
  layout(std430, binding = b) readonly buffer Block { float name[]; };              \
  layout(std430, binding = b) readonly buffer Block##H { float16_t name##_h[]; };   \
  float load_##name(uint i) { return VKP_F16_AT(b) ? float(name##_h[i]) : name[i]; }
#define VKP_INPUT4(b, Block, name)                                                        \
  VKP_INPUT(b, Block, name)                                                               \
  layout(std430, binding = b) readonly buffer Block##4 { vec4 name##4[]; };              \
  layout(std430, binding = b) readonly buffer Block##H4 { f16vec4 name##_h4[]; };        \
  vec4 load4_##name(uint i) { return VKP_F16_AT(b) ? vec4(name##_h4[i]) : name##4[i]; }
#define VKP_OUTPUT(b, Block, name)                                                   \
  layout(std430, binding = b) writeonly buffer Block { float name[]; };             \
  layout(std430, binding = b) writeonly buffer Block##H { float16_t name##_h[]; };  \
  void store_##name(uint i, float v) {                                              \
    if (VKP_F16_AT(b)) name##_h[i] = float16_t(v); else name[i] = v;                \
  }
#define VKP_OUTPUT4(b, Block, name)                                                  \
  VKP_OUTPUT(b, Block, name)                                                         \
  layout(std430, binding = b) writeonly buffer Block##4 { vec4 name##4[]; };        \
  layout(std430, binding = b) writeonly buffer Block##H4 { f16vec4 name##_h4[]; };  \
  void store4_##name(uint i, vec4 v) {                                              \
    if (VKP_F16_AT(b)) name##_h4[i] = f16vec4(v); else name##4[i] = v;              \
  }
#define VKP_INOUT(b, Block, name)                                                    \
  layout(std430, binding = b) buffer Block { float name[]; };                       \
  layout(std430, binding = b) buffer Block##H { float16_t name##_h[]; };            \
  float load_##name(uint i) { return VKP_F16_AT(b) ? float(name##_h[i]) : name[i]; } \
  void store_##name(uint i, float v) {                                              \
    if (VKP_F16_AT(b)) name##_h[i] = float16_t(v); else name[i] = v;                \
  }
#else
#define VKP_INPUT(b, Block, name)                                       \
  layout(std430, binding = b) readonly buffer Block { float name[]; }; \
  float load_##name(uint i) { return name[i]; }
#define VKP_INPUT4(b, Block, name)                                         \
  VKP_INPUT(b, Block, name)                                                \
  layout(std430, binding = b) readonly buffer Block##4 { vec4 name##4[]; }; \
  vec4 load4_##name(uint i) { return name##4[i]; }
#define VKP_OUTPUT(b, Block, name)                                       \
  layout(std430, binding = b) writeonly buffer Block { float name[]; }; \
  void store_##name(uint i, float v) { name[i] = v; }
#define VKP_OUTPUT4(b, Block, name)                                         \
  VKP_OUTPUT(b, Block, name)                                                \
  layout(std430, binding = b) writeonly buffer Block##4 { vec4 name##4[]; }; \
  void store4_##name(uint i, vec4 v) { name##4[i] = v; }
#define VKP_INOUT(b, Block, name)                              \
  layout(std430, binding = b) buffer Block { float name[]; }; \
  float load_##name(uint i) { return name[i]; }               \
  void store_##name(uint i, float v) { name[i] = v; }
#endif
