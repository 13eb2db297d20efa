// Float16 storage (vkp::vk::BufferSlice::f16): a tensor kept in half precision is
// converted to float32 when a kernel loads it and back when it stores it; all
// arithmetic stays float32. A kernel family that accepts it is listed after F16 in
// shaders/CMakeLists.txt and built twice: without VKP_F16 every binding is float32 and
// the module needs no 16-bit feature; with it, bit b of kF16Bindings says that binding
// b holds float16 values (the driver folds the choice when it specializes).
//
// The macros declare a float buffer `name` at binding b under both widths, with
//   VKP_INPUT(b, Block, name)    float load_<name>(uint i)
//   VKP_INPUT4(b, Block, name)   and vec4 load4_<name>(uint i) (i counts vec4s)
//   VKP_OUTPUT(b, Block, name)   void store_<name>(uint i, float v)
//   VKP_OUTPUT4(b, Block, name)  and void store4_<name>(uint i, vec4 v)
//   VKP_INOUT(b, Block, name)    load_<name> and store_<name> on one buffer
// The including shader enables GL_EXT_shader_16bit_storage under VKP_F16 (an
// #extension must precede every declaration).
layout(constant_id = 40) const uint kF16Bindings = 0;

#ifdef VKP_F16
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
