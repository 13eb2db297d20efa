#include "train/multi_predictor.h"

#include "core/error.h"
#include "train/batch_split.h"

namespace vkp::train {

MultiTowerOfflinePredictor::MultiTowerOfflinePredictor(const PredictConfig& config,
                                                       const std::vector<vk::Device*>& devices) {
  if (devices.empty()) throw Error(ErrorCode::invalid_argument, "MultiTowerOfflinePredictor: no devices");
  for (vk::Device* d : devices) predictors_.push_back(std::make_unique<OfflinePredictor>(config, *d));
}

OfflinePredictor& MultiTowerOfflinePredictor::predictor(int n) {
  const int k = ((n % size()) + size()) % size();
  return *predictors_[static_cast<std::size_t>(k)];
}

std::vector<PredictorBase*> MultiTowerOfflinePredictor::predictors() {
  std::vector<PredictorBase*> out;
  for (auto& p : predictors_) out.push_back(p.get());
  return out;
}

DataParallelOfflinePredictor::DataParallelOfflinePredictor(const PredictConfig& config,
                                                           const std::vector<vk::Device*>& devices)
    : towers_(config, devices) {}

std::vector<Array> DataParallelOfflinePredictor::operator()(const std::vector<Array>& inputs) {
  const std::vector<Array> whole[] = {inputs};
  const std::int64_t rows = batch_rows(inputs);
  const auto parts = static_cast<std::int64_t>(std::min<std::int64_t>(towers_.size(), std::max<std::int64_t>(rows, 1)));
  const std::vector<double> equal(static_cast<std::size_t>(parts), 1.0);
  std::vector<std::vector<Array>> split;
  resplit(whole, split_rows(rows, equal), split);
  // Each part on its device at once; tower 0's on this thread.
  std::vector<std::vector<Array>> results(split.size());
  std::vector<std::future<void>> others;
  for (std::size_t k = 1; k < split.size(); ++k)
    others.push_back(
        std::async(std::launch::async, [&, k] { results[k] = towers_.predictor(static_cast<int>(k))(split[k]); }));
  std::exception_ptr failed;
  try {
    results[0] = towers_.predictor(0)(split[0]);
  } catch (...) {
    failed = std::current_exception();
  }
  for (std::future<void>& f : others) {
    try {
      f.get();
    } catch (...) {
      if (!failed) failed = std::current_exception();
    }
  }
  if (failed) std::rethrow_exception(failed);
  if (results.size() == 1) return std::move(results[0]);
  // Join each output's parts in tower order: the parts are "batches" of one input each.
  std::vector<Array> out;
  for (std::size_t o = 0; o < results[0].size(); ++o) {
    std::vector<std::vector<Array>> pieces(results.size());
    std::int64_t total = 0;
    for (std::size_t k = 0; k < results.size(); ++k) {
      const Array& part = results[k][o];
      if (part.shape().rank() == 0 || part.shape()[0] != split[k][0].shape()[0])
        throw Error(ErrorCode::invalid_argument,
                    "DataParallelOfflinePredictor: output '" + output_names()[o] +
                        "' has no row for each input row (its shape is " + to_string(part.shape()) + " for " +
                        std::to_string(split[k][0].shape()[0]) + " rows), so parts cannot be joined");
      pieces[k] = {part};
      total += part.shape()[0];
    }
    std::vector<std::vector<Array>> joined;
    const std::int64_t all[] = {total};
    resplit(pieces, all, joined);
    out.push_back(std::move(joined[0][0]));
  }
  return out;
}

MultiThreadAsyncPredictor::MultiThreadAsyncPredictor(std::vector<PredictorBase*> predictors) {
  if (predictors.empty()) throw Error(ErrorCode::invalid_argument, "MultiThreadAsyncPredictor: no predictors");
  for (PredictorBase* p : predictors)
    if (p == nullptr) throw Error(ErrorCode::invalid_argument, "MultiThreadAsyncPredictor: a predictor is null");
  try {
    for (PredictorBase* p : predictors) threads_.emplace_back([this, p] { work(*p); });
  } catch (...) {
    stop();  // the threads started, before the error leaves (a joinable thread must not be destroyed)
    throw;
  }
}

MultiThreadAsyncPredictor::~MultiThreadAsyncPredictor() { stop(); }

void MultiThreadAsyncPredictor::stop() noexcept {
  {
    const std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_all();
  for (std::thread& t : threads_)
    if (t.joinable()) t.join();
}

std::future<std::vector<Array>> MultiThreadAsyncPredictor::put_task(std::vector<Array> inputs) {
  Task task{std::move(inputs), {}};
  std::future<std::vector<Array>> result = task.result.get_future();
  {
    const std::lock_guard lock(mutex_);
    tasks_.push_back(std::move(task));
  }
  ready_.notify_one();
  return result;
}

void MultiThreadAsyncPredictor::work(PredictorBase& predictor) {
  for (;;) {
    Task task;
    {
      std::unique_lock lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !tasks_.empty(); });
      if (tasks_.empty()) return;  // stopping, and every task is done
      task = std::move(tasks_.front());
      tasks_.pop_front();
    }
    try {
      task.result.set_value(predictor(task.inputs));
    } catch (...) {
      task.result.set_exception(std::current_exception());
    }
  }
}

}  // namespace vkp::train
