// Predictors over a dataset (tensorpack's predict/dataset.py): each datapoint of a
// DataFlow (its components the predictor's inputs, in order) through a predictor, the
// outputs in the dataflow's order, with a progress bar (core/progress.h).
// tensorpack's MultiProcessDatasetPredictor is a SimpleDatasetPredictor over a
// DataParallelOfflinePredictor (multi_predictor.h) here: threads and devices instead of
// processes, the order kept; each datapoint (a batch) is cut over the devices by rows, so
// datapoints of one row keep one device busy.
#pragma once

#include <cstdio>
#include <functional>
#include <memory>
#include <vector>

#include "dataflow/dataflow.h"
#include "train/predictor.h"

namespace vkp::train {

class DatasetPredictorBase {
 public:
  virtual ~DatasetPredictorBase() = default;
  // One epoch of the dataset (reset first if it was not): `each` gets every datapoint's
  // outputs, in order.
  virtual void get_result(const std::function<void(std::vector<Array>&)>& each) = 0;
  // The same, collected.
  std::vector<std::vector<Array>> get_all_result();
};

class SimpleDatasetPredictor : public DatasetPredictorBase {
 public:
  // `progress`: where the bar goes (null: none). Datapoints are run `chunk` at a time
  // through PredictorBase::predict (an OfflinePredictor writes the next datapoint's
  // inputs while the device computes one).
  SimpleDatasetPredictor(std::shared_ptr<PredictorBase> predictor, dataflow::DataFlowPtr dataset,
                         std::FILE* progress = stderr, std::size_t chunk = 8);
  // tensorpack's form: an OfflinePredictor of `config` on `device`.
  SimpleDatasetPredictor(const PredictConfig& config, dataflow::DataFlowPtr dataset, vk::Device& device,
                         std::FILE* progress = stderr);

  void get_result(const std::function<void(std::vector<Array>&)>& each) override;

 private:
  std::shared_ptr<PredictorBase> predictor_;
  dataflow::DataFlowPtr dataset_;
  std::FILE* progress_;
  std::size_t chunk_;
};

}  // namespace vkp::train
