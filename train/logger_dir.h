// The log directory of a run, train_log/<name>/ by convention: log.log receives every
// log line while the LoggerDir lives, and monitors and savers write there. What to do
// with a directory that exists is chosen by argument (tensorpack's actions); `ask`
// prompts only when stdin is a terminal and is an error otherwise, so nothing ever
// blocks on a prompt in a pipeline.
#pragma once

#include <string>

namespace vkp::train {

enum class DirAction {
  keep,    // use it as it is (resume)
  remove,  // delete it first
  backup,  // rename it to <dir>.<time>, then start anew
  fresh,   // use <dir>.<time> instead, a new directory
  ask,     // prompt on a terminal; an error otherwise
};

// Parses "k", "d", "b", "n" (and keep, delete, backup, new); Error otherwise.
DirAction parse_dir_action(const std::string& text);

class LoggerDir {
 public:
  LoggerDir(const std::string& dir, DirAction action);
  ~LoggerDir();
  LoggerDir(const LoggerDir&) = delete;
  LoggerDir& operator=(const LoggerDir&) = delete;

  // The directory in use (another one than asked for with DirAction::fresh).
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int sink_ = -1;
};

}  // namespace vkp::train
