// The optimizer update rules that shaders/optimizer.comp implements, numbered for its
// kKind. This enum is the one list: graph::OptimizerKind is it, and the shader build
// defines VKP_RULE_<NAME> (0, 1, ... in this order) from the line below, which
// cmake/VkpackShaders.cmake reads; keep the enumerators on that one line.
#pragma once

#include <cstdint>

namespace vkp::vk {

enum class UpdateRule : std::uint8_t { sgd, momentum, nesterov, adam, adamw, rmsprop, adagrad };

}  // namespace vkp::vk
