// Every environment variable vkpack reads, and one policy for all of them: unset or
// empty means the default; any other value must be one the variable takes, or it is
// Error(invalid_argument) naming the variable, the value and what it takes
// ("VKPACK_TEXEL_BUFFERS is 'banana'; it takes 0 or 1"). `vkpack help` lists them from
// variables(), and vk::Instance checks them all when it opens (check_all), so a mistyped
// value stops a program before it trains rather than meaning something else.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace vkp::env {

struct Variable {
  std::string_view name;
  std::string_view takes;    // "0 or 1", "mapped, staged or auto"
  std::string_view meaning;  // one line, with the default
  // The values it takes, separated by spaces, where they are a closed list; empty for a
  // free value (a directory, a number, a name another layer checks).
  std::string_view values = {};
};

// Every variable, by name.
std::span<const Variable> variables();

// The value of a variable of variables(); nullopt when unset or empty. A name not in
// variables() is a programming error: Error(not_found).
std::optional<std::string> text(std::string_view name);
// One of the variable's values (Variable::values), else Error naming the variable, the
// value and what it takes.
std::optional<std::string> choice(std::string_view name);
// 0 or 1.
std::optional<bool> flag(std::string_view name);
// A decimal number >= 0.
std::optional<double> seconds(std::string_view name);
// Error(invalid_argument): "<name> is '<value>'; it takes <takes>".
[[noreturn]] void bad_value(std::string_view name, std::string_view value);

// Every variable whose values core can tell (a list of values, a number) read once, throwing
// the first bad one's error. The log level is checked here too: the logger, which cannot
// throw, warns and logs at info.
void check_all();

}  // namespace vkp::env
