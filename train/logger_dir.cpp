#include "train/logger_dir.h"

#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <memory>

#include "core/error.h"
#include "core/log.h"

namespace vkp::train {
namespace {

namespace fs = std::filesystem;

std::string timestamp() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char text[32];
  std::strftime(text, sizeof text, "%m%d-%H%M%S", &local);
  return text;
}

// <dir>.<time>, with a counter when that exists too (two runs in one second).
std::string unused_name(const std::string& dir) {
  const std::string base = dir + "." + timestamp();
  std::string name = base;
  for (int i = 1; fs::exists(name); ++i) name = base + "-" + std::to_string(i);
  return name;
}

DirAction prompt(const std::string& dir) {
  if (isatty(STDIN_FILENO) == 0)
    throw Error(ErrorCode::invalid_argument, "log directory " + dir + " exists and stdin is not a terminal: choose an "
                                                                       "action (keep, delete, backup or new)");
  std::cerr << "Log directory " << dir << " exists! Use 'd' to delete it, 'b' to back it up, 'k' to keep it, 'n' to "
            << "use a new one: " << std::flush;
  std::string answer;
  std::getline(std::cin, answer);
  return parse_dir_action(answer);
}

}  // namespace

DirAction parse_dir_action(const std::string& text) {
  if (text == "k" || text == "keep") return DirAction::keep;
  if (text == "d" || text == "delete") return DirAction::remove;
  if (text == "b" || text == "backup") return DirAction::backup;
  if (text == "n" || text == "new") return DirAction::fresh;
  throw Error(ErrorCode::invalid_argument, "unknown log directory action '" + text + "'; use keep, delete, backup or new");
}

LoggerDir::LoggerDir(const std::string& dir, DirAction action) : path_(dir) {
  std::error_code ec;
  if (fs::exists(dir) && !fs::is_empty(dir, ec)) {
    if (action == DirAction::ask) action = prompt(dir);
    switch (action) {
      case DirAction::keep: break;
      case DirAction::remove: fs::remove_all(dir, ec); break;
      case DirAction::backup: {
        const std::string backup = unused_name(dir);
        fs::rename(dir, backup, ec);
        if (ec) throw Error(ErrorCode::io, "cannot back up " + dir + " to " + backup + ": " + ec.message());
        log_info("backed up the old log directory to {}", backup);
        break;
      }
      case DirAction::fresh: path_ = unused_name(dir); break;
      case DirAction::ask: break;
    }
    if (ec) throw Error(ErrorCode::io, "cannot prepare log directory " + dir + ": " + ec.message());
  }
  fs::create_directories(path_, ec);
  if (ec) throw Error(ErrorCode::io, "cannot create log directory " + path_ + ": " + ec.message());
  auto file = std::make_shared<std::ofstream>(fs::path(path_) / "log.log", std::ios::app);
  if (!*file) throw Error(ErrorCode::io, "cannot open " + path_ + "/log.log for writing");
  // The logger calls its sinks one at a time.
  sink_ = logger().add_sink([file](LogLevel, std::string_view line) {
    *file << line << '\n';
    file->flush();
  });
  log_info("log directory: {}", path_);
}

LoggerDir::~LoggerDir() {
  if (sink_ >= 0) logger().remove_sink(sink_);
}

}  // namespace vkp::train
