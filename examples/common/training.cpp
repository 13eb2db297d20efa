#include "training.h"

#include <algorithm>
#include <cstdio>
#include <cstring>

namespace vkp::examples {

std::vector<std::pair<std::int64_t, float>> stepped_schedule(float lr,
                                                             const std::vector<std::pair<double, float>>& drops,
                                                             int epochs) {
  std::vector<std::pair<std::int64_t, float>> schedule{{1, lr}};
  for (const auto& [fraction, value] : drops) {
    const auto epoch = static_cast<std::int64_t>(fraction * epochs) + 1;
    if (epoch > schedule.back().first) schedule.emplace_back(epoch, value);
  }
  return schedule;
}

std::unique_ptr<train::TowerTrainer> multi_device_trainer(const vk::Instance& instance, const std::vector<int>& devices,
                                                          const std::string& name, std::uint64_t seed,
                                                          train::PerDeviceOptions options) {
  switch (towers::parse_reduction(name)) {
    case towers::Reduction::replicated:
      return std::make_unique<train::SyncMultiDeviceTrainerReplicated>(instance, devices, seed, std::move(options));
    case towers::Reduction::parameter_server:
      return std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(instance, devices, seed,
                                                                            std::move(options));
    case towers::Reduction::async:
      return std::make_unique<train::AsyncMultiDeviceTrainer>(instance, devices, seed, 1.0f, std::move(options));
  }
  throw Error(ErrorCode::invalid_argument, "unknown trainer " + name);
}

callbacks::CallbackPtr model_saver(int max_to_keep, std::int64_t save_every) {
  auto saver = std::make_shared<callbacks::ModelSaver>(max_to_keep);
  if (save_every <= 0) return saver;
  return std::make_shared<callbacks::PeriodicTrigger>(std::move(saver), save_every, 1);
}

std::vector<callbacks::CallbackPtr> classifier_evaluation(dataflow::DataFlowPtr test_batches) {
  return {std::make_shared<callbacks::InferenceRunner>(
              std::move(test_batches),
              std::vector<callbacks::InferencerPtr>{
                  std::make_shared<callbacks::ScalarStats>(std::vector<std::string>{"cost", "accuracy"}),
                  std::make_shared<callbacks::ClassificationError>("incorrect_vector", "validation_error")}),
          std::make_shared<callbacks::MaxSaver>("validation_accuracy")};
}

void print_test_accuracies(const callbacks::Monitors& monitors, std::int64_t steps_per_epoch, const std::string& name,
                           const std::string& title) {
  std::printf("\nepoch  %s\n", title.c_str());
  for (const auto& [step, value] : monitors.get_history(name))
    std::printf("%5lld  %.4f\n", static_cast<long long>(step / steps_per_epoch), value);
}

void train_gan(const RunOptions& o, std::int64_t batch, bool mixed_precision,
               std::shared_ptr<train::GANModelDesc> model, const std::function<dataflow::DataFlowPtr()>& make_batches,
               std::vector<callbacks::CallbackPtr> callbacks) {
  const auto towers = static_cast<std::int64_t>(std::max<std::size_t>(1, o.devices.size()));
  // The train split's images (its file's header); an epoch is one pass over them.
  const std::int64_t train_images =
      dataflow::fashion_mnist_images(dataflow::Split::train, o.data.empty() ? dataflow::kFashionMnistDir : o.data);
  StepOptions{.batch = batch}.check_fits(towers, train_images);
  train::LoggerDir logdir(o.logdir, o.resume ? train::DirAction::keep : train::DirAction::backup);
  vk::Instance instance;
  std::unique_ptr<vk::Device> device;
  std::unique_ptr<train::TowerTrainer> trainer;
  if (o.devices.empty()) {
    device = std::make_unique<vk::Device>(instance, o.device);
    trainer = std::make_unique<train::GANTrainer>(*device, model, o.seed);
  } else {
    trainer = std::make_unique<train::MultiDeviceGANTrainer>(
        instance, o.devices, model,
        train::GANTowerOptions{.reduction = towers::parse_reduction(o.trainer), .seed = o.seed});
  }
  train::TrainConfig config;
  config.model = model;
  config.dataflow = make_batches();
  config.steps_per_epoch = o.steps > 0 ? o.steps : train_images / batch / towers;
  config.max_epoch = o.epochs;
  config.logger_dir = logdir.path();
  config.mixed_precision = mixed_precision;
  config.callbacks = {model_saver(10, o.save_every)};
  for (auto& c : callbacks) config.callbacks.push_back(std::move(c));
  if (o.resume) config = train::AutoResumeTrainConfig(std::move(config));
  train::launch_train_with_config(std::move(config), *trainer);
}

void publish_image(callbacks::TrainerView& trainer, const std::string& name, const Array& image) {
  trainer.monitors().put_image(name, image);
  if (trainer.logger_dir().empty()) return;
  const std::string path = trainer.logger_dir() + "/" + name + "-" + std::to_string(trainer.global_step()) + ".png";
  write_png(path, image);
  log_info("{}: {}", name, path);
}

namespace {

// Rows [at, at + count) of `a` (row-major, first axis) as an array of `rows` rows, the
// rest zeros.
Array rows_of(const Array& a, std::int64_t at, std::int64_t count, std::int64_t rows) {
  std::vector<std::int64_t> dims = a.shape().dims();
  const std::size_t row_bytes = a.nbytes() / static_cast<std::size_t>(dims[0]);
  dims[0] = rows;
  Array out(a.dtype(), Shape(dims));
  std::memcpy(out.bytes().data(), a.bytes().data() + static_cast<std::size_t>(at) * row_bytes,
              static_cast<std::size_t>(count) * row_bytes);
  return out;
}

}  // namespace

Array predict_rows(const callbacks::PredictFn& predict, const std::vector<Array>& rows, std::int64_t batch) {
  const std::int64_t count = rows.at(0).shape()[0];
  Array out;
  std::size_t row_bytes = 0;
  for (std::int64_t at = 0; at < count; at += batch) {
    const std::int64_t n = std::min(batch, count - at);
    std::vector<Array> part;
    for (const Array& r : rows) part.push_back(rows_of(r, at, n, batch));
    const Array result = predict(part).at(0);
    if (at == 0) {
      std::vector<std::int64_t> dims = result.shape().dims();
      row_bytes = result.nbytes() / static_cast<std::size_t>(dims[0]);
      dims[0] = count;
      out = Array(result.dtype(), Shape(dims));
    }
    std::memcpy(out.bytes().data() + static_cast<std::size_t>(at) * row_bytes, result.bytes().data(),
                static_cast<std::size_t>(n) * row_bytes);
  }
  return out;
}

std::vector<std::int32_t> predicted_labels(const callbacks::PredictFn& predict, const Array& images,
                                           std::int64_t batch) {
  const std::int64_t count = images.shape()[0];
  std::vector<std::int32_t> labels;
  for (std::int64_t at = 0; at < count; at += batch) {
    const std::int64_t n = std::min(batch, count - at);
    const Array logits = predict({rows_of(images, at, n, n)}).at(0);
    const std::int64_t classes = logits.shape()[1];
    for (std::int64_t i = 0; i < n; ++i) {
      const float* row = logits.data<float>().data() + i * classes;
      labels.push_back(static_cast<std::int32_t>(std::max_element(row, row + classes) - row));
    }
  }
  return labels;
}

}  // namespace vkp::examples
