#include "core/error.h"

#include <cstdio>
#include <cstdlib>

#include "core/source_path.h"

namespace vkp {

std::string_view to_string(ErrorCode code) {
  switch (code) {
    case ErrorCode::vulkan: return "vulkan";
    case ErrorCode::no_device: return "no_device";
    case ErrorCode::device_lost: return "device_lost";
    case ErrorCode::out_of_memory: return "out_of_memory";
    case ErrorCode::unsupported: return "unsupported";
    case ErrorCode::invalid_argument: return "invalid_argument";
    case ErrorCode::io: return "io";
    case ErrorCode::bad_data: return "bad_data";
    case ErrorCode::not_found: return "not_found";
  }
  return "unknown";
}

void fail_check(const char* condition, std::string_view message, SourceLocation where) {
  const std::string_view file = project_path(where.file_name());
  std::fprintf(stderr, "vkpack: internal check failed at %.*s:%u in %s\n  %s\n  %.*s\n", static_cast<int>(file.size()),
               file.data(), static_cast<unsigned>(where.line()), where.function_name(), condition,
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace vkp
