#include "core/crash_point.h"

#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <optional>
#include <string>

#include "core/env.h"
#include "core/error.h"

namespace vkp {
namespace {

struct Armed {
  Armed() {
    const std::optional<std::string> spec = env::text("VKPACK_CRASH_AT");
    if (!spec) return;
    std::string s = *spec;
    if (const std::size_t hash = s.rfind('#'); hash != std::string::npos) {
      char* end = nullptr;
      pass = std::strtol(s.c_str() + hash + 1, &end, 10);
      require(end && *end == '\0' && pass >= 1, ErrorCode::invalid_argument,
              "VKPACK_CRASH_AT='" + s + "': the pass after '#' must be a whole number from 1");
      s.resize(hash);
    }
    point = s;
  }
  std::string point;          // empty: disarmed
  long pass = 1;              // the pass that kills
  std::atomic<long> seen{0};  // passes so far
};

Armed& armed() {
  static Armed a;
  return a;
}

}  // namespace

bool crash_points_armed() { return !armed().point.empty(); }

void crash_point(std::string_view point) {
  Armed& a = armed();
  if (a.point.empty() || point != a.point) return;
  if (a.seen.fetch_add(1) + 1 == a.pass) ::kill(::getpid(), SIGKILL);
}

}  // namespace vkp
