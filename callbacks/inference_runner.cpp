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

BinaryClassificationStats::BinaryClassificationStats(std::string prediction, std::string label, std::string prefix)
    : prediction_(std::move(prediction)), label_(std::move(label)), prefix_(std::move(prefix)) {}

void BinaryClassificationStats::before_inference() { true_positives_ = predicted_positives_ = positives_ = 0; }

namespace {

// Element i of a number array, as positive (nonzero) or not.
bool positive_at(const Array& a, std::size_t i) {
  switch (a.dtype()) {
    case DType::f32: return a.data<float>()[i] != 0.0f;
    case DType::i32: return a.data<std::int32_t>()[i] != 0;
    case DType::i64: return a.data<std::int64_t>()[i] != 0;
    case DType::u8: return a.data<std::uint8_t>()[i] != 0;
    case DType::f16: return (reinterpret_cast<const std::uint16_t*>(a.bytes().data())[i] & 0x7fffu) != 0;
  }
  return false;
}

}  // namespace

void BinaryClassificationStats::on_batch(std::span<const Array> values, std::int64_t) {
  const Array &prediction = values[0], &label = values[1];
  if (prediction.numel() != label.numel())
    throw Error(ErrorCode::invalid_argument, "BinaryClassificationStats: '" + prediction_ + "' is " +
                                                 describe(prediction) + " and '" + label_ + "' " + describe(label) +
                                                 ": one value of each per example");
  for (std::size_t i = 0; i < static_cast<std::size_t>(label.numel()); ++i) {
    const bool predicted = positive_at(prediction, i), actual = positive_at(label, i);
    true_positives_ += predicted && actual;
    predicted_positives_ += predicted;
    positives_ += actual;
  }
}

std::map<std::string, double> BinaryClassificationStats::after_inference() {
  const auto ratio = [](std::int64_t a, std::int64_t b) {
    return b > 0 ? static_cast<double>(a) / static_cast<double>(b) : 0.0;
  };
  return {{prefix_ + "_precision", ratio(true_positives_, predicted_positives_)},
          {prefix_ + "_recall", ratio(true_positives_, positives_)}};
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
