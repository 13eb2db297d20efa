// An embedded SPIR-V module: the build compiles shaders/<name>.comp and defines
// vkp::shaders::<name> (see shaders/embedded.h, generated).
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

namespace vkp::shaders {

struct Spirv {
  std::string_view name;               // the .comp file's stem; also the kernel's name
  std::span<const std::uint32_t> words;
  // A float16 build's sibling for devices without storageBuffer16BitAccess: the same
  // kernel with float16 values packed two to a 32-bit word (shaders/f16_storage.glsl).
  const Spirv* packed = nullptr;
};

}  // namespace vkp::shaders
