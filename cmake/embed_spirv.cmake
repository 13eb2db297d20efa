# cmake -DSPV=<file.spv> -DCPP=<out.cpp> -DNAME=<name> [-DPACKED=<name>] -P embed_spirv.cmake
# Writes <out.cpp> defining vkp::shaders::<name>, the SPIR-V words of <file.spv>; with
# PACKED, its Spirv::packed points at that build (the float16 build's packed sibling).
file(READ "${SPV}" hex HEX)
string(LENGTH "${hex}" hex_length)
math(EXPR remainder "${hex_length} % 8")
if(hex_length EQUAL 0 OR NOT remainder EQUAL 0)
  message(FATAL_ERROR "${SPV}: ${hex_length} hex digits is not a whole number of SPIR-V words")
endif()
# SPIR-V is little-endian on every host Vulkan runs on: bytes b0 b1 b2 b3 -> 0xb3b2b1b0.
string(REGEX REPLACE "(..)(..)(..)(..)" "0x\\4\\3\\2\\1u," words "${hex}")
string(REGEX REPLACE "(0x........u,0x........u,0x........u,0x........u,0x........u,0x........u,)" "\\1\n  " words "${words}")
math(EXPR count "${hex_length} / 8")
set(packed_declaration "")
set(packed_pointer "")
if(PACKED)
  set(packed_declaration "extern const Spirv ${PACKED};\n")
  set(packed_pointer ", &${PACKED}")
endif()
file(WRITE "${CPP}.tmp"
"// Generated from ${NAME}.comp by cmake/embed_spirv.cmake; do not edit.
#include \"shaders/spirv.h\"
namespace vkp::shaders {
namespace {
constexpr std::uint32_t kWords[${count}] = {
  ${words}
};
}  // namespace
${packed_declaration}extern const Spirv ${NAME};
const Spirv ${NAME}{\"${NAME}\", kWords${packed_pointer}};
}  // namespace vkp::shaders
")
file(RENAME "${CPP}.tmp" "${CPP}")
