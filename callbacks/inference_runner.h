// InferenceRunner: at the end of every epoch, runs the inference tower (BatchNorm moving
// averages, no dropout) over a dataflow and puts what its Inferencers compute into the
// monitors (tensorpack's InferenceRunner, ScalarStats, ClassificationError,
// BinaryClassificationStats).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "dataflow/dataflow.h"

namespace vkp::callbacks {

class Inferencer {
 public:
  virtual ~Inferencer() = default;
  // Output tensors of the inference tower it reads, by name.
  virtual std::vector<std::string> names() const = 0;
  virtual void before_inference() = 0;
  // The values of names() for one batch of `batch_size` datapoints.
  virtual void on_batch(std::span<const Array> values, std::int64_t batch_size) = 0;
  // Statistics to put, by name.
  virtual std::map<std::string, double> after_inference() = 0;
};

using InferencerPtr = std::shared_ptr<Inferencer>;

// The mean of each scalar output over the dataflow, weighted by batch size, put as
// "<prefix>_<name>" ("validation_cost").
class ScalarStats : public Inferencer {
 public:
  explicit ScalarStats(std::vector<std::string> names, std::string prefix = "validation");
  std::vector<std::string> names() const override { return names_; }
  void before_inference() override;
  void on_batch(std::span<const Array> values, std::int64_t batch_size) override;
  std::map<std::string, double> after_inference() override;

 private:
  std::vector<std::string> names_;
  std::string prefix_;
  std::vector<double> sums_;
  std::int64_t count_ = 0;
};

// The fraction of examples marked wrong: `wrong` is a per-example vector of 1 (wrong)
// and 0 (right); put as `summary_name`.
class ClassificationError : public Inferencer {
 public:
  explicit ClassificationError(std::string wrong = "incorrect_vector", std::string summary_name = "validation_error");
  std::vector<std::string> names() const override { return {wrong_}; }
  void before_inference() override;
  void on_batch(std::span<const Array> values, std::int64_t batch_size) override;
  std::map<std::string, double> after_inference() override;

 private:
  std::string wrong_, summary_name_;
  double wrong_count_ = 0;
  std::int64_t count_ = 0;
};

// Precision and recall of a binary classifier (tensorpack's BinaryClassificationStats):
// `prediction` and `label` are per-example tensors of the same element count, any
// number type, nonzero meaning positive. Put as "<prefix>_precision" (true positives over
// predicted positives) and "<prefix>_recall" (true positives over positives), each 0
// when its denominator is.
class BinaryClassificationStats : public Inferencer {
 public:
  BinaryClassificationStats(std::string prediction, std::string label, std::string prefix = "val");
  std::vector<std::string> names() const override { return {prediction_, label_}; }
  void before_inference() override;
  void on_batch(std::span<const Array> values, std::int64_t batch_size) override;
  std::map<std::string, double> after_inference() override;

 private:
  std::string prediction_, label_, prefix_;
  std::int64_t true_positives_ = 0, predicted_positives_ = 0, positives_ = 0;
};

class InferenceRunner : public Callback {
 public:
  // Datapoints of `flow` hold the model's inputs in order (batched).
  InferenceRunner(dataflow::DataFlowPtr flow, std::vector<InferencerPtr> inferencers);

 protected:
  void on_setup_graph() override;
  void on_trigger() override;

  // What a runner of its own (DataParallelInferenceRunner) shares: the inferencers'
  // outputs in order; one batch's values handed to them; their statistics put into the
  // monitors.
  std::vector<std::string> output_names() const;
  void deliver(const dataflow::Datapoint& inputs, std::span<const Array> values);
  void put_statistics();

  dataflow::DataFlowPtr flow_;
  std::vector<InferencerPtr> inferencers_;

 private:
  PredictFn predict_;
};

}  // namespace vkp::callbacks
