// Command-line parsing shared by the bundled examples: options are walked in order and
// every error names the option ("--batch takes a number, not 'x'"), as Error
// (invalid_argument) for the program's main to print.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vkp::examples {

class Flags {
 public:
  // `help` is printed, and the program exits 0, on --help or -h.
  Flags(int argc, char** argv, const char* help);

  // Moves to the next option; false past the last.
  bool next();
  const std::string& option() const { return option_; }
  bool is(const char* name) const { return option_ == name; }

  // The option's value: the next argument (Error if there is none).
  std::string value();
  int to_int();
  std::int64_t to_i64();
  std::uint64_t to_u64();
  float to_float();
  // "0,1" or "0,0": device indices, >= 0.
  std::vector<int> to_indices();
  // "a,b,c" -> {"a", "b", "c"}.
  std::vector<std::string> to_list();

  // Error(invalid_argument): the option is not one of the program's.
  [[noreturn]] void unknown() const;

 private:
  template <typename T, typename Convert>
  T number(Convert convert);

  int argc_;
  char** argv_;
  const char* help_;
  int at_ = 0;
  std::string option_;
};

}  // namespace vkp::examples
