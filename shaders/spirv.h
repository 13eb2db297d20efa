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
};

}  // namespace vkp::shaders
