#include "callbacks/concurrency.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cerrno>
#include <cstring>

#include "core/error.h"
#include "core/log.h"

extern char** environ;

namespace vkp::callbacks {

namespace {

// waitpid, again when a signal interrupts it; the pid back, 0 (WNOHANG, still running) or -1.
int wait_for(int pid, int* status, int options) {
  int got = -1;
  do got = waitpid(pid, status, options);
  while (got == -1 && errno == EINTR);
  return got;
}

}  // namespace

StartProcOrThread::StartProcOrThread(std::vector<ThreadFn> threads, std::vector<std::vector<std::string>> processes,
                                     bool stop_at_last, std::chrono::milliseconds grace)
    : thread_fns_(std::move(threads)), processes_(std::move(processes)), stop_at_last_(stop_at_last), grace_(grace) {
  for (const ThreadFn& fn : thread_fns_)
    require(static_cast<bool>(fn), ErrorCode::invalid_argument, "StartProcOrThread: a thread function is empty");
  for (const std::vector<std::string>& argv : processes_)
    require(!argv.empty() && !argv[0].empty(), ErrorCode::invalid_argument,
            "StartProcOrThread: a process has no program to run");
}

StartProcOrThread::~StartProcOrThread() {
  // Left to finish (stop_at_last false): the threads are asked to stop, then everything
  // is waited for, so that no thread outlives the callback and no program is a zombie.
  for (std::jthread& t : threads_) t.request_stop();
  for (std::jthread& t : threads_)
    if (t.joinable()) t.join();
  for (std::size_t i = 0; i < pids_.size(); ++i)
    if (statuses_[i] == -1) wait_for(pids_[i], &statuses_[i], 0);
}

void StartProcOrThread::on_before_train() {
  for (const ThreadFn& fn : thread_fns_)
    threads_.emplace_back([fn](std::stop_token stop) {
      try {
        fn(stop);
      } catch (const std::exception& e) {
        log_error("StartProcOrThread: a thread failed: {}", e.what());
      } catch (...) {
        log_error("StartProcOrThread: a thread failed with an exception that is no std::exception");
      }
    });
  for (const std::vector<std::string>& argv : processes_) {
    std::vector<char*> args;
    for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    // No signal blocked and SIGTERM at its default action in the program, whatever this
    // process blocks or ignores, so that the SIGTERM at the end stops it.
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    sigset_t none, term;
    sigemptyset(&none);
    sigemptyset(&term);
    sigaddset(&term, SIGTERM);
    posix_spawnattr_setsigmask(&attr, &none);
    posix_spawnattr_setsigdefault(&attr, &term);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t pid = 0;
    const int rc = posix_spawnp(&pid, args[0], nullptr, &attr, args.data(), environ);
    posix_spawnattr_destroy(&attr);
    if (rc != 0) throw Error(ErrorCode::io, "StartProcOrThread: cannot start '" + argv[0] + "': " + std::strerror(rc));
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
    if (statuses_[i] != -1 || wait_for(pids_[i], &statuses_[i], WNOHANG) == pids_[i]) continue;  // ended by itself
    kill(pids_[i], SIGTERM);
    const auto deadline = std::chrono::steady_clock::now() + grace_;
    bool ended = false;
    while (!(ended = wait_for(pids_[i], &statuses_[i], WNOHANG) != 0) && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    if (ended) {
      log_info("StartProcOrThread: stopped {} (pid {})", processes_[i][0], pids_[i]);
      continue;
    }
    log_warn("StartProcOrThread: {} (pid {}) did not end within {} ms of SIGTERM; killed", processes_[i][0], pids_[i],
             grace_.count());
    kill(pids_[i], SIGKILL);
    wait_for(pids_[i], &statuses_[i], 0);
  }
}

}  // namespace vkp::callbacks
