// vkpack's one error path (docs/design.md section 2).
//
// Environmental failures (a Vulkan call that failed, a device that was lost, memory that
// ran out, a file that is missing or malformed, a shape a user got wrong) throw vkp::Error.
// Broken internal invariants are programmer errors: VKP_CHECK prints and aborts.
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace vkp {

enum class ErrorCode {
  vulkan,            // a Vulkan call returned a failure not covered below
  no_device,         // no Vulkan loader, no driver, or no usable device
  device_lost,       // VK_ERROR_DEVICE_LOST: the device cannot be used any more
  out_of_memory,     // device or host memory exhausted
  unsupported,       // a feature, extension or limit the work needs is absent
  invalid_argument,  // a caller passed something inconsistent (shape, dtype, index)
  io,                // a file could not be opened, read or written
  bad_data,          // a file or stream was read but its contents are malformed
  not_found,         // a name (variable, tensor, kernel) that does not exist
};

std::string_view to_string(ErrorCode code);

class Error : public std::runtime_error {
 public:
  Error(ErrorCode code, const std::string& message)
      : std::runtime_error(message), code_(code) {}
  ErrorCode code() const { return code_; }

 private:
  ErrorCode code_;
};

// Throws Error(code, message) unless `condition` holds. For checks of user input, where
// the message is cheap to build; otherwise test and throw by hand.
inline void require(bool condition, ErrorCode code, const std::string& message) {
  if (!condition) throw Error(code, message);
}

// Where a call was made, as std::source_location says it, from builtins that GCC and
// clang 14 both have (clang 14 with libstdc++ has no std::source_location): a default
// argument `where = SourceLocation::current()` takes the caller's file and line.
class SourceLocation {
 public:
  static constexpr SourceLocation current(const char* file = __builtin_FILE(), std::uint_least32_t line = __builtin_LINE(),
                                          const char* function = __builtin_FUNCTION()) {
    return SourceLocation(file, line, function);
  }
  constexpr const char* file_name() const { return file_; }
  constexpr std::uint_least32_t line() const { return line_; }
  constexpr const char* function_name() const { return function_; }

 private:
  constexpr SourceLocation(const char* file, std::uint_least32_t line, const char* function)
      : file_(file), line_(line), function_(function) {}
  const char* file_;
  std::uint_least32_t line_;
  const char* function_;
};

[[noreturn]] void fail_check(const char* condition, std::string_view message, SourceLocation where);

}  // namespace vkp

// Internal invariant: prints the condition, message and location, then aborts. The
// message is only built when the check fails.
#define VKP_CHECK(cond, msg)                                                          \
  do {                                                                                \
    if (!(cond)) ::vkp::fail_check(#cond, (msg), ::vkp::SourceLocation::current());   \
  } while (false)
