#include "callbacks/data_parallel_inference.h"

#include <chrono>
#include <future>

#include "core/log.h"

namespace vkp::callbacks {

DataParallelInferenceRunner::DataParallelInferenceRunner(dataflow::DataFlowPtr flow,
                                                         std::vector<InferencerPtr> inferencers)
    : InferenceRunner(std::move(flow), std::move(inferencers)) {}

void DataParallelInferenceRunner::on_setup_graph() {
  // No predictor here: the towers' are asked for at every trigger.
  outputs_ = output_names();
  if (!flow_->is_reset()) flow_->reset_state();
}

void DataParallelInferenceRunner::on_trigger() {
  const auto start = std::chrono::steady_clock::now();
  // Asked every time: the trainer copies tower 0's variables to the other towers first.
  const std::vector<PredictFn> towers = trainer().tower_predictors(trainer().input_names(), outputs_);
  for (const InferencerPtr& inf : inferencers_) inf->before_inference();

  std::vector<dataflow::Datapoint> round;
  std::vector<std::future<std::vector<Array>>> results;
  auto finish_round = [&] {
    results.clear();
    for (std::size_t k = 0; k < round.size(); ++k)
      results.push_back(std::async(std::launch::async, [&towers, &round, k] { return towers[k](round[k]); }));
    // Every future is waited for before an error propagates: no thread outlives `round`.
    std::vector<std::vector<Array>> values;
    std::exception_ptr failure;
    for (auto& r : results) {
      try {
        values.push_back(r.get());
      } catch (...) {
        if (!failure) failure = std::current_exception();
      }
    }
    if (failure) std::rethrow_exception(failure);
    for (std::size_t k = 0; k < round.size(); ++k) deliver(round[k], values[k]);
    round.clear();
  };
  for (dataflow::Datapoint& dp : flow_->epoch()) {
    round.push_back(std::move(dp));
    if (round.size() == towers.size()) finish_round();
  }
  if (!round.empty()) finish_round();

  put_statistics();
  log_info("inference on {} towers ran in {:.1f} s", towers.size(),
           std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace vkp::callbacks
