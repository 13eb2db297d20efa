#include "callbacks/inference_runner.h"

#include <chrono>

#include "callbacks/monitors.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {

ScalarStats::ScalarStats(std::vector<std::string> names, std::string prefix)
    : names_(std::move(names)), prefix_(std::move(prefix)) {}

void ScalarStats::before_inference() {
  sums_.assign(names_.size(), 0.0);
  count_ = 0;
}

void ScalarStats::on_batch(std::span<const Array> values, std::int64_t batch_size) {
  for (std::size_t i = 0; i < values.size(); ++i) {
    if (values[i].numel() != 1 || values[i].dtype() != DType::f32)
      throw Error(ErrorCode::invalid_argument, "ScalarStats: '" + names_[i] + "' is " + describe(values[i]) +
                                                   ", not a scalar f32");
    sums_[i] += static_cast<double>(values[i].data<float>()[0]) * static_cast<double>(batch_size);
  }
  count_ += batch_size;
}

std::map<std::string, double> ScalarStats::after_inference() {
  std::map<std::string, double> out;
  for (std::size_t i = 0; i < names_.size(); ++i)
    out[prefix_.empty() ? names_[i] : prefix_ + "_" + names_[i]] = count_ > 0 ? sums_[i] / static_cast<double>(count_) : 0.0;
  return out;
}

ClassificationError::ClassificationError(std::string wrong, std::string summary_name)
    : wrong_(std::move(wrong)), summary_name_(std::move(summary_name)) {}

void ClassificationError::before_inference() {
  wrong_count_ = 0;
  count_ = 0;
}

void ClassificationError::on_batch(std::span<const Array> values, std::int64_t) {
  const Array& v = values[0];
  if (v.dtype() != DType::f32 || v.shape().rank() != 1)
    throw Error(ErrorCode::invalid_argument, "ClassificationError: '" + wrong_ + "' is " + describe(v) +
                                                 ", not a per-example f32 vector");
  for (float w : v.data<float>()) wrong_count_ += w;
  count_ += v.numel();
}

std::map<std::string, double> ClassificationError::after_inference() {
  return {{summary_name_, count_ > 0 ? wrong_count_ / static_cast<double>(count_) : 0.0}};
}

InferenceRunner::InferenceRunner(dataflow::DataFlowPtr flow, std::vector<InferencerPtr> inferencers)
    : flow_(std::move(flow)), inferencers_(std::move(inferencers)) {}

std::vector<std::string> InferenceRunner::output_names() const {
  std::vector<std::string> outputs;
  for (const InferencerPtr& inf : inferencers_)
    for (const std::string& name : inf->names()) outputs.push_back(name);
  return outputs;
}

void InferenceRunner::deliver(const dataflow::Datapoint& inputs, std::span<const Array> values) {
  const std::int64_t batch = batch_rows(inputs);
  std::size_t at = 0;
  for (const InferencerPtr& inf : inferencers_) {
    const std::size_t n = inf->names().size();
    inf->on_batch(values.subspan(at, n), batch);
    at += n;
  }
}

void InferenceRunner::put_statistics() {
  for (const InferencerPtr& inf : inferencers_)
    for (const auto& [name, value] : inf->after_inference()) trainer().monitors().put_scalar(name, value);
}

void InferenceRunner::on_setup_graph() {
  predict_ = trainer().predictor(trainer().input_names(), output_names());
  if (!flow_->is_reset()) flow_->reset_state();
}

void InferenceRunner::on_trigger() {
  const auto start = std::chrono::steady_clock::now();
  for (const InferencerPtr& inf : inferencers_) inf->before_inference();
  for (dataflow::Datapoint& dp : flow_->epoch()) deliver(dp, predict_(dp));
  put_statistics();
  log_info("inference ran in {:.1f} s", std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
}

}  // namespace vkp::callbacks
