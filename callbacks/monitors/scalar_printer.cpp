#include "callbacks/monitors/scalar_printer.h"

#include <algorithm>

#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {
namespace {

std::vector<std::regex> compile(const std::vector<std::string>& patterns, const char* which) {
  std::vector<std::regex> out;
  for (const std::string& p : patterns) {
    try {
      out.emplace_back(p);
    } catch (const std::regex_error& e) {
      throw Error(ErrorCode::invalid_argument, std::string("ScalarPrinter: ") + which + " pattern '" + p +
                                                   "' is not a regular expression: " + e.what());
    }
  }
  return out;
}

bool any_match(const std::vector<std::regex>& patterns, const std::string& name) {
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::regex& r) { return std::regex_search(name, r); });
}

}  // namespace

ScalarPrinter::ScalarPrinter(const std::vector<std::string>& include, const std::vector<std::string>& exclude)
    : include_(compile(include, "include")), exclude_(compile(exclude, "exclude")) {}

bool ScalarPrinter::selected(const std::string& name) const {
  return (include_.empty() || any_match(include_, name)) && !any_match(exclude_, name);
}

void ScalarPrinter::process_scalar(const std::string& name, double value, std::int64_t) { epoch_[name] = value; }

void ScalarPrinter::trigger_epoch() {
  for (const auto& [name, value] : epoch_)
    if (selected(name)) log_info("{}: {:.5g}", name, value);
  epoch_.clear();
}

}  // namespace vkp::callbacks
