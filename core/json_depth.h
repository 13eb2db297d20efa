// How deeply JSON text nests, counted without parsing it. nlohmann::json parses any
// depth without recursion, but dumping, comparing or copying a value recurses once per
// level, and a file from elsewhere can nest a million levels in two megabytes: a crash
// on the stack, not an error. Every reader of outside JSON (safetensors headers,
// stats.json, the tuning file) refuses text nested deeper than kMaxJsonDepth first.
#pragma once

#include <cstddef>
#include <string_view>

namespace vkp {

// vkpack's own JSON files nest three levels at most.
inline constexpr std::size_t kMaxJsonDepth = 64;

// The deepest nesting of arrays and objects in `text` (0 for a bare number or string);
// brackets inside strings, escaped quotes included, are not counted. Text that is not
// JSON gives some number; the parser refuses it afterwards.
std::size_t json_nesting_depth(std::string_view text);

}  // namespace vkp
