// Fuzz target: stats.json as a resumed run reads it back (JSONWriter's list of epochs):
// a problem named, or entries of integers and numbers whose JSON parses again.
#include "fuzz_target.h"

#include <cstdlib>
#include <string_view>

#include "callbacks/monitors/stats_file.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  return vkp::fuzz::expect_clean([&] {
    const vkp::callbacks::Stats stats = vkp::callbacks::parse_stats(text);
    if (!stats.problem.empty() && !stats.entries.empty()) std::abort();
    for (const vkp::callbacks::StatsEntry& entry : stats.entries) {
      // What JSONWriter writes back is read back the same.
      const vkp::callbacks::Stats again = vkp::callbacks::parse_stats("[" + entry.json + "]");
      if (!again.problem.empty() || again.entries.size() != 1 || again.entries[0].epoch != entry.epoch) std::abort();
    }
  });
}
