#include "training.h"

#include <cstdio>

namespace vkp::examples {

std::vector<std::pair<std::int64_t, float>> stepped_schedule(float lr, const std::vector<std::pair<double, float>>& drops,
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
      return std::make_unique<train::SyncMultiDeviceTrainerParameterServer>(instance, devices, seed, std::move(options));
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

void print_test_accuracies(const callbacks::Monitors& monitors, std::int64_t steps_per_epoch) {
  std::printf("\nepoch  test accuracy\n");
  for (const auto& [step, value] : monitors.get_history("validation_accuracy"))
    std::printf("%5lld  %.4f\n", static_cast<long long>(step / steps_per_epoch), value);
}

}  // namespace vkp::examples
