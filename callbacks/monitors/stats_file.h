// stats.json read back (JSONWriter writes it, and reads it when a run resumes): a JSON list
// with one object per epoch, each holding an integer "epoch_num", an integer
// "global_step" and the epoch's scalars as numbers (null for NaN). A file from elsewhere
// may hold anything; parse_stats says what is wrong instead of trusting it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

namespace vkp::callbacks {

// A stats.json larger than this is not read (a run of a thousand epochs with a hundred
// scalars each writes about 4 MB).
inline constexpr std::size_t kMaxStatsBytes = std::size_t{256} << 20;

struct StatsEntry {
  std::int64_t epoch = 0;
  std::int64_t global_step = -1;          // -1 when the entry has none
  std::map<std::string, double> scalars;  // null read as NaN
  std::string json;                       // the entry, serialized again on one line
};

struct Stats {
  std::vector<StatsEntry> entries;  // in the file's order
  std::string problem;              // why the text is not such a list; empty when it is
};

Stats parse_stats(std::string_view text);

}  // namespace vkp::callbacks
