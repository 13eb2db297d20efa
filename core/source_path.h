// The path of a source file from vkpack's top folder on, for messages: __FILE__ is an
// absolute path in a CMake build ("/home/me/vkpack/engine/vk/memory.cpp") and a relative
// one under ccache's base_dir ("../engine/vk/memory.cpp"); either gives
// "engine/vk/memory.cpp".
#pragma once

#include <string_view>

namespace vkp {

// `file` from its first folder named as one of vkpack's top-level folders (core, dataflow,
// engine, towers, callbacks, train, tools, examples, tests, bench); the whole of `file`
// when none is (a program of one's own that calls vkpack).
std::string_view project_path(std::string_view file);

}  // namespace vkp
