// ScalarPrinter: at the end of every epoch, logs the epoch's latest value of each scalar,
// one per line, sorted by name, as tensorpack's ScalarPrinter prints them:
//
//   cross_entropy_loss: 0.31217
//   learning_rate: 1e-05
//
// (the value as Python's '{:.5g}' formats it).
#pragma once

#include <map>
#include <regex>
#include <string>
#include <vector>

#include "callbacks/monitors.h"

namespace vkp::callbacks {

class ScalarPrinter : public Monitor {
 public:
  // A name is printed when some pattern of `include` matches part of it (std::regex_search,
  // ECMAScript syntax, as Python's re.search) or `include` is empty, and no pattern of
  // `exclude` does: tensorpack's whitelist and blacklist. Error(invalid_argument) naming
  // a pattern that is not a valid regular expression.
  explicit ScalarPrinter(const std::vector<std::string>& include = {}, const std::vector<std::string>& exclude = {});

  void process_scalar(const std::string& name, double value, std::int64_t step) override;
  void trigger_epoch() override;

 private:
  bool selected(const std::string& name) const;

  std::vector<std::regex> include_;
  std::vector<std::regex> exclude_;
  std::map<std::string, double> epoch_;  // this epoch's latest value of each scalar
};

}  // namespace vkp::callbacks
