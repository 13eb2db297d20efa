// StartProcOrThread (tensorpack's callbacks/concurrency): work that runs beside training
// and ends with it, as threads of this process or as other programs.
#pragma once

#include <chrono>
#include <functional>
#include <stop_token>
#include <string>
#include <thread>
#include <vector>

#include "callbacks/callback.h"

namespace vkp::callbacks {

// Starts `threads` (each given a std::stop_token) and the programs `processes` (argv
// lists; the first word is looked up on PATH; started with no signal blocked and SIGTERM
// at its default action) before training. When training ends, with stop_at_last: each
// thread is asked to stop and joined, and each program still running gets SIGTERM and,
// if it has not ended `grace` later, SIGKILL. Without stop_at_last they are left to
// finish: the destructor asks the threads to stop and blocks until they and the
// programs have ended by themselves. A program that cannot start is an Error naming it;
// a thread's exception is logged, not rethrown (training goes on).
class StartProcOrThread : public Callback {
 public:
  using ThreadFn = std::function<void(std::stop_token)>;
  explicit StartProcOrThread(std::vector<ThreadFn> threads, std::vector<std::vector<std::string>> processes = {},
                             bool stop_at_last = true, std::chrono::milliseconds grace = std::chrono::seconds(5));
  ~StartProcOrThread() override;
  StartProcOrThread(const StartProcOrThread&) = delete;
  StartProcOrThread& operator=(const StartProcOrThread&) = delete;

  // The programs' process ids, in the order given (empty before training).
  const std::vector<int>& pids() const { return pids_; }
  // How each program ended, as waitpid reports it (-1: still running or not waited for).
  const std::vector<int>& exit_statuses() const { return statuses_; }

 protected:
  void on_before_train() override;
  void on_after_train() override;

 private:
  void stop();

  std::vector<ThreadFn> thread_fns_;
  std::vector<std::vector<std::string>> processes_;
  bool stop_at_last_;
  std::chrono::milliseconds grace_;
  std::vector<std::jthread> threads_;
  std::vector<int> pids_, statuses_;
};

}  // namespace vkp::callbacks
