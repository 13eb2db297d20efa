#include "core/log.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <optional>
#include <string>

#include "core/env.h"

namespace vkp {
namespace {

// VKPACK_LOG_LEVEL's level; nullopt for a value that names none (info is used then).
std::optional<LogLevel> level_from_environment() {
  const std::optional<std::string> value = env::text("VKPACK_LOG_LEVEL");
  if (!value) return LogLevel::info;
  const std::string_view v(*value);
  if (v == "debug") return LogLevel::debug;
  if (v == "info") return LogLevel::info;
  if (v == "warn") return LogLevel::warn;
  if (v == "error") return LogLevel::error;
  return std::nullopt;
}

// "[1122 14:03:59]" in local time, as tensorpack prints it.
std::string time_prefix() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "[%m%d %H:%M:%S]", &local);
  return text;
}

std::string_view tag(LogLevel level) {
  switch (level) {
    case LogLevel::debug: return "DBG ";
    case LogLevel::info: return "";
    case LogLevel::warn: return "WRN ";
    case LogLevel::error: return "ERR ";
  }
  return "";
}

}  // namespace

Logger::Logger() {
  const std::optional<LogLevel> level = level_from_environment();
  level_ = level.value_or(LogLevel::info);
  if (!level)
    write(LogLevel::warn, fmt::format("VKPACK_LOG_LEVEL '{}' is not debug, info, warn or error; logging at info",
                                      env::text("VKPACK_LOG_LEVEL").value_or("")));
}

int Logger::add_sink(Sink sink) {
  std::lock_guard lock(mutex_);
  sinks_.emplace_back(next_id_, std::move(sink));
  return next_id_++;
}

void Logger::remove_sink(int id) {
  std::lock_guard lock(mutex_);
  std::erase_if(sinks_, [id](const auto& s) { return s.first == id; });
}

void Logger::write(LogLevel level, std::string_view message) {
  const std::string prefix = time_prefix();
  const std::string line = fmt::format("{} {}{}", prefix, tag(level), message);
  std::lock_guard lock(mutex_);
  if (to_stderr_) {
    static const bool colour = isatty(STDERR_FILENO) != 0;
    const char* on = level >= LogLevel::error ? "\033[31m" : level == LogLevel::warn ? "\033[33m" : "\033[32m";
    if (colour)
      std::fprintf(stderr, "%s%s\033[0m %s%.*s\n", on, prefix.c_str(), std::string(tag(level)).c_str(),
                   static_cast<int>(message.size()), message.data());
    else
      std::fprintf(stderr, "%s\n", line.c_str());
  }
  for (auto& [id, sink] : sinks_) sink(level, line);
}

Logger& logger() {
  static Logger instance;
  return instance;
}

}  // namespace vkp
