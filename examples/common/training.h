// What the bundled examples' training programs share: the stepped learning-rate
// schedule, the trainer that --devices and --trainer name, and the evaluation of a
// classifier on the test split after every epoch.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "vkpack/vkpack.h"

namespace vkp::examples {

// `lr` from epoch 1, then each (fraction of `epochs`, value) from the epoch that
// fraction falls in; a point on or before the previous one's epoch (short runs) is dropped.
std::vector<std::pair<std::int64_t, float>> stepped_schedule(float lr, const std::vector<std::pair<double, float>>& drops,
                                                             int epochs);

// The data-parallel trainer of `devices` named by --trainer: replicated, ps or async.
std::unique_ptr<train::TowerTrainer> multi_device_trainer(const vk::Instance& instance, const std::vector<int>& devices,
                                                          const std::string& name, std::uint64_t seed,
                                                          train::PerDeviceOptions options = {});

// ModelSaver keeping the newest `max_to_keep` checkpoints, at every epoch's end and,
// with --save-every N (save_every > 0), every N global steps too: a killed run resumed
// with --resume then loses at most N steps instead of the epoch in progress.
callbacks::CallbackPtr model_saver(int max_to_keep, std::int64_t save_every);

// For a model naming "cost", "accuracy" and "incorrect_vector": the test batches run
// after every epoch (validation_cost, validation_accuracy, validation_error) and the
// best validation accuracy's checkpoint kept (MaxSaver).
std::vector<callbacks::CallbackPtr> classifier_evaluation(dataflow::DataFlowPtr test_batches);

// The table "epoch  test accuracy" of validation_accuracy's history on stdout (after
// --resume the earlier run's epochs too); an entry's epoch is its global step over the
// steps of an epoch.
void print_test_accuracies(const callbacks::Monitors& monitors, std::int64_t steps_per_epoch);

}  // namespace vkp::examples
