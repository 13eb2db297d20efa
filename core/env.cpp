#include "core/env.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "core/error.h"

namespace vkp::env {
namespace {

constexpr Variable kVariables[] = {
    {"VKPACK_CACHE_DIR", "a directory",
     "where compiled pipelines and tuning results are kept (default ~/.cache/vkpack)"},
    {"VKPACK_CRASH_AT", "a crash point, optionally #n", "SIGKILL at the n-th pass of a crash point (crash tests)"},
    {"VKPACK_KERNEL_STATS", "0 or 1",
     "1: log each kernel's statistics from the driver as it is built (registers, local and shared memory), where "
     "it offers VK_KHR_pipeline_executable_properties; those pipelines skip the pipeline cache (default 0)",
     "0 1"},
    {"VKPACK_LIMITS_PROFILE", "a profile of `vkpack devices --profiles`, or none",
     "believe no limit above that GPU's (default none)"},
    {"VKPACK_LOG_LEVEL", "debug, info, warn or error", "the least level logged (default info)",
     "debug info warn error"},
    {"VKPACK_MEMORY", "mapped, staged or auto", "how devices reach their memory (default auto)", "mapped staged auto"},
    {"VKPACK_MPI_TIMEOUT", "a number of seconds >= 0 (0: wait forever)",
     "how long a rank waits for a collective before failing (default 300)"},
    {"VKPACK_TEXEL_BUFFERS", "0 or 1", "0: storage buffers only, no texel-buffer reads (default 1)", "0 1"},
    {"VKPACK_TUNE", "on, off or auto", "measure kernel variants per device on first use (default auto: on GPUs)",
     "on off auto"},
};

const Variable& find(std::string_view name) {
  for (const Variable& v : kVariables)
    if (v.name == name) return v;
  throw Error(ErrorCode::not_found, "env: " + std::string(name) + " is not one of vkpack's variables (core/env.cpp)");
}

}  // namespace

std::span<const Variable> variables() { return kVariables; }

std::optional<std::string> text(std::string_view name) {
  const Variable& v = find(name);
  const char* value = std::getenv(std::string(v.name).c_str());
  if (value == nullptr || *value == '\0') return std::nullopt;
  return std::string(value);
}

void bad_value(std::string_view name, std::string_view value) {
  throw Error(ErrorCode::invalid_argument, std::string(name) + " is '" + std::string(value) + "'; it takes " +
                                               std::string(find(name).takes));
}

std::optional<std::string> choice(std::string_view name) {
  std::optional<std::string> value = text(name);
  if (!value) return value;
  std::string_view values = find(name).values;
  while (!values.empty()) {
    const std::size_t end = std::min(values.find(' '), values.size());
    if (values.substr(0, end) == *value) return value;
    values.remove_prefix(std::min(end + 1, values.size()));
  }
  bad_value(name, *value);
}

std::optional<bool> flag(std::string_view name) {
  const std::optional<std::string> value = choice(name);
  if (!value) return std::nullopt;
  return *value == "1";
}

std::optional<double> seconds(std::string_view name) {
  const std::optional<std::string> value = text(name);
  if (!value) return std::nullopt;
  char* end = nullptr;
  const double s = std::strtod(value->c_str(), &end);
  if (*end != '\0' || !(s >= 0) || s == HUGE_VAL) bad_value(name, *value);
  return s;
}

void check_all() {
  for (const Variable& v : kVariables)
    if (!v.values.empty()) (void)choice(v.name);
  (void)seconds("VKPACK_MPI_TIMEOUT");
}

}  // namespace vkp::env
