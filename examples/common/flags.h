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

// The options of a run that every bundled example takes, parsed and checked here once:
// --epochs, --steps, --save-every, --device, --devices, --trainer, --logdir, --data,
// --seed, --resume. An example's options derive from it and set their own defaults; its
// parse loop offers each option to take() first.
struct RunOptions {
  int epochs = 10;
  std::int64_t steps = 0;       // 0: a pass over the data
  std::int64_t save_every = 0;  // 0: a checkpoint at each epoch's end only
  int device = 0;
  std::vector<int> devices;  // several towers; empty: one, on `device`
  std::string trainer = "replicated";
  std::string logdir, data;  // empty: the example's own default
  std::uint64_t seed = 1;
  bool resume = false;

  // Reads the option `flags` is at, when it is one of the above: true; false otherwise.
  bool take(Flags& flags);
  // Error(invalid_argument) naming the option whose value is out of range; `pass` is
  // what an epoch of 0 steps passes over ("the train split").
  void check(const char* pass) const;
};

// --batch and --lr, which the examples that train by gradient steps take: each sets its
// defaults, offers its options to take(), and checks them with check().
struct StepOptions {
  std::int64_t batch = 64;
  float lr = 1e-3f;

  // Error(invalid_argument) naming --batch when a step of `towers` batches would take more
  // than the `train_images` of the train split.
  void check_fits(std::int64_t towers, std::int64_t train_images) const;
  // Reads --batch or --lr when `flags` is at one of them: true; false otherwise.
  bool take(Flags& flags);
  // Error(invalid_argument) for a batch below `min_batch` (`why` says why, when it is
  // more than 1) or a learning rate that is not a positive finite number.
  void check(std::int64_t min_batch = 1, const char* why = nullptr) const;
};

}  // namespace vkp::examples
