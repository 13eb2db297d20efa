// Predictors on several devices (tensorpack's predict/multigpu.py and concurrency.py):
//   MultiTowerOfflinePredictor    one OfflinePredictor per device, to hand to threads
//   DataParallelOfflinePredictor  one call's batch cut over the devices by rows, run on
//                                 all of them at once, the results joined in input order
//   MultiThreadAsyncPredictor     a thread per predictor taking tasks from one queue;
//                                 put_task returns a future
// All of them are safe to call from several threads.
#pragma once

#include <condition_variable>
#include <deque>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "train/predictor.h"

namespace vkp::train {

class MultiTowerOfflinePredictor {
 public:
  // Error(invalid_argument) without devices.
  MultiTowerOfflinePredictor(const PredictConfig& config, const std::vector<vk::Device*>& devices);
  int size() const { return static_cast<int>(predictors_.size()); }
  // tensorpack's get_predictor(n): tower n's (n modulo the towers, as tensorpack wraps).
  OfflinePredictor& predictor(int n);
  std::vector<PredictorBase*> predictors();

 private:
  std::vector<std::unique_ptr<OfflinePredictor>> predictors_;
};

class DataParallelOfflinePredictor : public PredictorBase {
 public:
  DataParallelOfflinePredictor(const PredictConfig& config, const std::vector<vk::Device*>& devices);
  // Every input's first dimension is the batch's rows; the rows are cut into as many
  // equal parts as there are devices (fewer when the batch has fewer rows), each run on
  // its device on a thread of its own, and every output's parts joined along the first
  // dimension. Error(invalid_argument) when an output of a part has no row dimension.
  std::vector<Array> operator()(const std::vector<Array>& inputs) override;
  const std::vector<std::string>& input_names() const override { return towers_.predictor(0).input_names(); }
  const std::vector<std::string>& output_names() const override { return towers_.predictor(0).output_names(); }
  int size() const { return towers_.size(); }

 private:
  mutable MultiTowerOfflinePredictor towers_;
};

class MultiThreadAsyncPredictor {
 public:
  // A thread per predictor (which must outlive this); tasks go to whichever is free.
  explicit MultiThreadAsyncPredictor(std::vector<PredictorBase*> predictors);
  ~MultiThreadAsyncPredictor();  // finishes the tasks put, then stops the threads
  MultiThreadAsyncPredictor(const MultiThreadAsyncPredictor&) = delete;
  MultiThreadAsyncPredictor& operator=(const MultiThreadAsyncPredictor&) = delete;

  // The outputs for `inputs`, when a thread has computed them; a predictor's Error is
  // rethrown by the future's get().
  std::future<std::vector<Array>> put_task(std::vector<Array> inputs);

 private:
  struct Task {
    std::vector<Array> inputs;
    std::promise<std::vector<Array>> result;
  };
  void work(PredictorBase& predictor);
  void stop() noexcept;  // finishes the tasks put, then joins the threads

  std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<Task> tasks_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace vkp::train
