#include "callbacks/monitors/stats_file.h"

#include <limits>
#include <nlohmann/json.hpp>

#include "core/json_depth.h"

namespace vkp::callbacks {

Stats parse_stats(std::string_view text) {
  Stats out;
  if (text.size() > kMaxStatsBytes) {
    out.problem = "it is " + std::to_string(text.size()) + " bytes, more than the " + std::to_string(kMaxStatsBytes) +
                  " read back";
    return out;
  }
  if (const std::size_t depth = json_nesting_depth(text); depth > kMaxJsonDepth) {
    out.problem = "it nests " + std::to_string(depth) + " levels deep, more than the " +
                  std::to_string(kMaxJsonDepth) + " read (a list of objects of numbers needs 2)";
    return out;
  }
  const nlohmann::json stats = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (stats.is_discarded()) {
    out.problem = "it is not valid JSON";
    return out;
  }
  if (!stats.is_array()) {
    out.problem = "it is not a JSON list";
    return out;
  }
  out.entries.reserve(stats.size());
  for (std::size_t i = 0; i < stats.size(); ++i) {
    const nlohmann::json& entry = stats[i];
    const std::string where = "entry " + std::to_string(i);
    if (!entry.is_object() || !entry.contains("epoch_num") || !entry["epoch_num"].is_number_integer()) {
      out.problem = where + " is not an object with an integer \"epoch_num\"";
      break;
    }
    StatsEntry& e = out.entries.emplace_back();
    for (const auto& [name, value] : entry.items()) {
      if (name == "epoch_num" || name == "global_step") {
        if (!value.is_number_integer()) {
          out.problem = where + "'s \"" + name + "\" is not an integer";
          break;
        }
        (name == "epoch_num" ? e.epoch : e.global_step) = value.get<std::int64_t>();
      } else if (value.is_number()) {
        e.scalars[name] = value.get<double>();
      } else if (value.is_null()) {
        e.scalars[name] = std::numeric_limits<double>::quiet_NaN();
      } else {
        out.problem = where + "'s \"" + name.substr(0, 100) + "\" is not a number";
        break;
      }
    }
    if (!out.problem.empty()) break;
    // Numbers only, so this is flat: nesting from elsewhere was refused above.
    e.json = entry.dump();
  }
  if (!out.problem.empty()) out.entries.clear();
  return out;
}

}  // namespace vkp::callbacks
