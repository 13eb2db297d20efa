// Logging through fmt: leveled messages to stderr and to any added sinks (train/ adds
// the log directory's log.log).
//
// The logger is the one process-wide object in vkpack: messages from every layer and
// thread go to the same place, as with tensorpack's logger. Its level starts from the
// environment variable VKPACK_LOG_LEVEL (debug, info, warn, error; default info), read
// here and nowhere else.
#pragma once

#include <fmt/format.h>

#include <functional>
#include <mutex>
#include <string_view>
#include <vector>

namespace vkp {

enum class LogLevel { debug = 0, info = 1, warn = 2, error = 3 };

class Logger {
 public:
  using Sink = std::function<void(LogLevel, std::string_view line)>;

  Logger();
  bool enabled(LogLevel level) const { return level >= level_; }
  void set_level(LogLevel level) { level_ = level; }
  LogLevel level() const { return level_; }
  // Adds a sink that receives every formatted line (with its time prefix, no colour);
  // returns an id for remove_sink.
  int add_sink(Sink sink);
  void remove_sink(int id);
  // Whether lines also go to stderr (on by default).
  void set_stderr(bool on) { to_stderr_ = on; }

  void write(LogLevel level, std::string_view message);

 private:
  std::mutex mutex_;
  LogLevel level_ = LogLevel::info;
  bool to_stderr_ = true;
  int next_id_ = 0;
  std::vector<std::pair<int, Sink>> sinks_;
};

Logger& logger();

template <class... Args>
void log_debug(fmt::format_string<Args...> format, Args&&... args) {
  if (logger().enabled(LogLevel::debug))
    logger().write(LogLevel::debug, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void log_info(fmt::format_string<Args...> format, Args&&... args) {
  if (logger().enabled(LogLevel::info))
    logger().write(LogLevel::info, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void log_warn(fmt::format_string<Args...> format, Args&&... args) {
  if (logger().enabled(LogLevel::warn))
    logger().write(LogLevel::warn, fmt::format(format, std::forward<Args>(args)...));
}
template <class... Args>
void log_error(fmt::format_string<Args...> format, Args&&... args) {
  if (logger().enabled(LogLevel::error))
    logger().write(LogLevel::error, fmt::format(format, std::forward<Args>(args)...));
}

}  // namespace vkp
