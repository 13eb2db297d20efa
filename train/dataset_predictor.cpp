#include "train/dataset_predictor.h"

#include "core/error.h"
#include "core/progress.h"

namespace vkp::train {

std::vector<std::vector<Array>> DatasetPredictorBase::get_all_result() {
  std::vector<std::vector<Array>> out;
  get_result([&out](std::vector<Array>& outputs) { out.push_back(std::move(outputs)); });
  return out;
}

SimpleDatasetPredictor::SimpleDatasetPredictor(std::shared_ptr<PredictorBase> predictor, dataflow::DataFlowPtr dataset,
                                               std::FILE* progress, std::size_t chunk)
    : predictor_(std::move(predictor)), dataset_(std::move(dataset)), progress_(progress), chunk_(chunk) {
  if (!predictor_ || !dataset_)
    throw Error(ErrorCode::invalid_argument, "SimpleDatasetPredictor: the predictor or the dataset is null");
  if (chunk_ == 0) throw Error(ErrorCode::invalid_argument, "SimpleDatasetPredictor: chunk must be at least 1");
}

SimpleDatasetPredictor::SimpleDatasetPredictor(const PredictConfig& config, dataflow::DataFlowPtr dataset,
                                               vk::Device& device, std::FILE* progress)
    : SimpleDatasetPredictor(std::make_shared<OfflinePredictor>(config, device), std::move(dataset), progress) {}

void SimpleDatasetPredictor::get_result(const std::function<void(std::vector<Array>&)>& each) {
  if (!dataset_->is_reset()) dataset_->reset_state();
  const std::optional<std::size_t> size = dataset_->size();
  ProgressPrinter bar(progress_, "Predicting", size ? static_cast<std::int64_t>(*size) : 0);
  const std::size_t inputs = predictor_->input_names().size();
  std::vector<std::vector<Array>> chunk;
  std::int64_t done = 0;
  const auto flush = [&] {
    std::vector<std::vector<Array>> outputs = predictor_->predict(chunk);
    for (std::vector<Array>& o : outputs) each(o);
    done += static_cast<std::int64_t>(chunk.size());
    chunk.clear();
    bar.update(done);
  };
  dataset_->start_epoch();
  while (std::optional<dataflow::Datapoint> dp = dataset_->next()) {
    if (dp->size() != inputs)
      throw Error(ErrorCode::invalid_argument, "SimpleDatasetPredictor: datapoint " +
                                                   std::to_string(done + static_cast<std::int64_t>(chunk.size())) +
                                                   " has " + std::to_string(dp->size()) +
                                                   " components; the predictor takes " + std::to_string(inputs) +
                                                   " inputs");
    chunk.push_back(std::move(*dp));
    if (chunk.size() == chunk_) flush();
  }
  if (!chunk.empty()) flush();
  bar.finish(done);
}

}  // namespace vkp::train
