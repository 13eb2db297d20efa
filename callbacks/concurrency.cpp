#include "callbacks/concurrency.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstring>

#include "core/error.h"
#include "core/log.h"

extern char** environ;

namespace vkp::callbacks {

StartProcOrThread::StartProcOrThread(std::vector<ThreadFn> threads, std::vector<std::vector<std::string>> processes,
                                     bool stop_at_last)
    : thread_fns_(std::move(threads)), processes_(std::move(processes)), stop_at_last_(stop_at_last) {
  for (const ThreadFn& fn : thread_fns_)
    require(static_cast<bool>(fn), ErrorCode::invalid_argument, "StartProcOrThread: a thread function is empty");
  for (const std::vector<std::string>& argv : processes_)
    require(!argv.empty() && !argv[0].empty(), ErrorCode::invalid_argument,
            "StartProcOrThread: a process has no program to run");
}

StartProcOrThread::~StartProcOrThread() {
  // Left to finish (stop_at_last false), or never stopped because training failed
  // before after_train: join and wait now, never leave a zombie or a running thread.
  for (std::jthread& t : threads_)
    if (t.joinable()) t.join();
  for (std::size_t i = 0; i < pids_.size(); ++i)
    if (statuses_[i] == -1) waitpid(pids_[i], &statuses_[i], 0);
}

void StartProcOrThread::on_before_train() {
  for (const ThreadFn& fn : thread_fns_)
    threads_.emplace_back([fn](std::stop_token stop) {
      try {
        fn(stop);
      } catch (const std::exception& e) {
        log_error("StartProcOrThread: a thread failed: {}", e.what());
      }
    });
  for (const std::vector<std::string>& argv : processes_) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    pid_t pid = 0;
    if (const int rc = posix_spawnp(&pid, args[0], nullptr, nullptr, args.data(), environ); rc != 0)
      throw Error(ErrorCode::io, "StartProcOrThread: cannot start '" + argv[0] + "': " + std::strerror(rc));
    pids_.push_back(static_cast<int>(pid));
    statuses_.push_back(-1);
    log_info("StartProcOrThread: started {} (pid {})", argv[0], pid);
  }
}

void StartProcOrThread::on_after_train() {
  if (stop_at_last_) stop();
}

void StartProcOrThread::stop() {
  for (std::jthread& t : threads_) t.request_stop();
  for (std::jthread& t : threads_)
    if (t.joinable()) t.join();
  for (std::size_t i = 0; i < pids_.size(); ++i) {
    if (statuses_[i] != -1) continue;
    if (waitpid(pids_[i], &statuses_[i], WNOHANG) == pids_[i]) continue;  // ended by itself
    kill(pids_[i], SIGTERM);
    waitpid(pids_[i], &statuses_[i], 0);
    log_info("StartProcOrThread: stopped {} (pid {})", processes_[i][0], pids_[i]);
  }
}

}  // namespace vkp::callbacks
