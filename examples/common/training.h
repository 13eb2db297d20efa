// What the bundled examples' training programs share: the stepped learning-rate
// schedule, the trainer that --devices and --trainer name, and the evaluation of a
// classifier on the test split after every epoch.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "flags.h"
#include "vkpack/vkpack.h"

namespace vkp::examples {

// `lr` from epoch 1, then each (fraction of `epochs`, value) from the epoch that
// fraction falls in; a point on or before the previous one's epoch (short runs) is dropped.
std::vector<std::pair<std::int64_t, float>> stepped_schedule(float lr,
                                                             const std::vector<std::pair<double, float>>& drops,
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

// Trains a GAN as examples/gan and examples/infogan do: GANTrainer on --device, or
// MultiDeviceGANTrainer on --devices with --trainer, fed by make_batches() (`batch`
// datapoints a tower and step); an epoch is a pass over the train split unless --steps
// says otherwise; a ModelSaver and `callbacks` run; --resume continues from the log
// directory; `mixed_precision` (--mixed-precision) as TrainConfig's. Error naming --batch
// when a step would take more than the train split.
void train_gan(const RunOptions& o, std::int64_t batch, bool mixed_precision,
               std::shared_ptr<train::GANModelDesc> model, const std::function<dataflow::DataFlowPtr()>& make_batches,
               std::vector<callbacks::CallbackPtr> callbacks);

// A picture of the run: to the monitors (TensorBoard) as `name`, and, where the run has
// a log directory, to <logdir>/<name>-<global step>.png, logged as "<name>: <path>".
void publish_image(callbacks::TrainerView& trainer, const std::string& name, const Array& image);

// Rows of inputs for a model whose inputs have a fixed batch (the GANs' generators), run
// `batch` rows at a time, the last batch padded with zeros; the first output's rows
// joined in the inputs' order. Every input has the same number of rows.
Array predict_rows(const callbacks::PredictFn& predict, const std::vector<Array>& rows, std::int64_t batch);

// The arg max of each row of a classifier's first output (logits [N, classes]) for
// `images` [N, ...], `batch` images at a time.
std::vector<std::int32_t> predicted_labels(const callbacks::PredictFn& predict, const Array& images,
                                           std::int64_t batch);

// The table "epoch  <title>" of the history of the scalar `name` on stdout (after
// --resume the earlier run's epochs too); an entry's epoch is its global step over the
// steps of an epoch.
void print_test_accuracies(const callbacks::Monitors& monitors, std::int64_t steps_per_epoch,
                           const std::string& name = "validation_accuracy", const std::string& title = "test accuracy");

}  // namespace vkp::examples
