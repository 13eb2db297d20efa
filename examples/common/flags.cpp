#include "flags.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "core/error.h"

namespace vkp::examples {

Flags::Flags(int argc, char** argv, const char* help) : argc_(argc), argv_(argv), help_(help) {}

bool Flags::next() {
  if (++at_ >= argc_) return false;
  option_ = argv_[at_];
  if (option_ == "--help" || option_ == "-h") {
    std::fputs(help_, stdout);
    std::exit(0);
  }
  return true;
}

std::string Flags::value() {
  if (at_ + 1 >= argc_) throw Error(ErrorCode::invalid_argument, option_ + " needs a value; see --help");
  return argv_[++at_];
}

template <typename T, typename Convert>
T Flags::number(Convert convert) {
  const std::string text = value();
  // stoull takes "-1" as a huge number: a sign is no part of an unsigned value.
  if (!text.empty() && (text[0] != '-' || !std::is_unsigned_v<T>)) {
    try {
      std::size_t used = 0;
      const auto v = convert(text, &used);
      // Floats keep nan and inf, for the program's own check to name.
      if (used == text.size() &&
          (std::is_floating_point_v<T> || (v >= std::numeric_limits<T>::lowest() && v <= std::numeric_limits<T>::max())))
        return static_cast<T>(v);
    } catch (const std::exception&) {
    }
  }
  if constexpr (std::is_unsigned_v<T>)
    throw Error(ErrorCode::invalid_argument, option_ + " takes a number from 0 to " +
                                                 std::to_string(std::numeric_limits<T>::max()) + ", not '" + text + "'");
  throw Error(ErrorCode::invalid_argument, option_ + " takes a number, not '" + text + "'");
}

int Flags::to_int() { return number<int>([](const std::string& t, std::size_t* n) { return std::stoll(t, n); }); }
std::int64_t Flags::to_i64() {
  return number<std::int64_t>([](const std::string& t, std::size_t* n) { return std::stoll(t, n); });
}
std::uint64_t Flags::to_u64() {
  return number<std::uint64_t>([](const std::string& t, std::size_t* n) { return std::stoull(t, n); });
}
float Flags::to_float() { return number<float>([](const std::string& t, std::size_t* n) { return std::stof(t, n); }); }

std::vector<std::string> Flags::to_list() {
  const std::string text = value();
  std::vector<std::string> items;
  std::size_t at = 0;
  while (at <= text.size()) {
    const std::size_t comma = std::min(text.find(',', at), text.size());
    items.push_back(text.substr(at, comma - at));
    at = comma + 1;
  }
  return items;
}

std::vector<int> Flags::to_indices() {
  const std::string text = argv_[std::min(at_ + 1, argc_ - 1)];
  std::vector<int> indices;
  for (const std::string& item : to_list()) {
    std::size_t used = 0;
    int index = -1;
    try {
      index = std::stoi(item, &used);
    } catch (const std::exception&) {
    }
    if (item.empty() || used != item.size() || index < 0)
      throw Error(ErrorCode::invalid_argument, option_ + " takes indices like 0,1 or 0,0; not '" + text + "'");
    indices.push_back(index);
  }
  return indices;
}

bool RunOptions::take(Flags& flags) {
  if (flags.is("--epochs"))
    epochs = flags.to_int();
  else if (flags.is("--steps"))
    steps = flags.to_i64();
  else if (flags.is("--save-every"))
    save_every = flags.to_i64();
  else if (flags.is("--device"))
    device = flags.to_int();
  else if (flags.is("--devices"))
    devices = flags.to_indices();
  else if (flags.is("--trainer"))
    trainer = flags.value();
  else if (flags.is("--logdir"))
    logdir = flags.value();
  else if (flags.is("--data"))
    data = flags.value();
  else if (flags.is("--seed"))
    seed = flags.to_u64();
  else if (flags.is("--resume"))
    resume = true;
  else
    return false;
  return true;
}

void RunOptions::check(const char* pass) const {
  if (epochs < 1) throw Error(ErrorCode::invalid_argument, "--epochs must be >= 1");
  if (steps < 0)
    throw Error(ErrorCode::invalid_argument, std::string("--steps must be >= 0 (0: a pass over ") + pass + ")");
  if (save_every < 0)
    throw Error(ErrorCode::invalid_argument, "--save-every must be >= 0 (0: at each epoch's end only)");
  if (device < 0) throw Error(ErrorCode::invalid_argument, "--device must be a device index, >= 0");
}

bool StepOptions::take(Flags& flags) {
  if (flags.is("--batch"))
    batch = flags.to_i64();
  else if (flags.is("--lr"))
    lr = flags.to_float();
  else
    return false;
  return true;
}

void StepOptions::check_fits(std::int64_t towers, std::int64_t train_images) const {
  if (batch * towers > train_images)
    throw Error(ErrorCode::invalid_argument,
                "--batch " + std::to_string(batch) + (towers > 1 ? " on " + std::to_string(towers) + " towers" : "") +
                    " is more than the " + std::to_string(train_images) + " images of the train split");
}

void StepOptions::check(std::int64_t min_batch, const char* why) const {
  if (batch < min_batch)
    throw Error(ErrorCode::invalid_argument, "--batch must be >= " + std::to_string(min_batch) +
                                                 (why ? std::string(" (") + why + ")" : std::string()));
  if (!(lr > 0) || !std::isfinite(lr))
    throw Error(ErrorCode::invalid_argument, "--lr must be a positive finite number, not " + std::to_string(lr));
}

void Flags::unknown() const { throw Error(ErrorCode::invalid_argument, "unknown option " + option_ + "; see --help"); }

}  // namespace vkp::examples
