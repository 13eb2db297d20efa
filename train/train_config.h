// TrainConfig and launch_train_with_config: tensorpack's way to describe and start a
// training run. AutoResumeTrainConfig continues a run from its log directory's latest
// checkpoint: variables, optimizer slots, global step, epoch and hyperparameters.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "callbacks/callback.h"
#include "callbacks/monitors.h"
#include "dataflow/dataflow.h"
#include "engine/graph/loss_scale.h"
#include "train/input_source.h"
#include "train/model_desc.h"
#include "train/session_init.h"
#include "train/train_loop_options.h"

namespace vkp::train {

class TowerTrainer;

// TrainLoopOptions (train_loop_options.h): session_init, steps_per_epoch (0: the dataflow's size),
// starting_epoch, max_epoch, starting_global_step, starting_local_step, logger_dir
// (empty: no files, see LoggerDir) and resume_input.
struct TrainConfig : TrainLoopOptions {
  // Where batches come from: a dataflow (read through QueueInput) or an InputSource.
  dataflow::DataFlowPtr dataflow;
  InputSourcePtr data;
  std::shared_ptr<ModelDesc> model;
  std::vector<callbacks::CallbackPtr> callbacks;
  // nullopt: tensorpack's defaults (default_callbacks(), default_monitors()).
  std::optional<std::vector<callbacks::CallbackPtr>> extra_callbacks;
  std::optional<std::vector<callbacks::MonitorPtr>> monitors;
  // TowerTrainer::enable_mixed_precision(loss_scale): float16 activations and gradients,
  // dynamic loss scaling.
  bool mixed_precision = false;
  graph::LossScaleOptions loss_scale;
};

// MovingAverageSummary, ProgressBar; update ops (BatchNorm averages) run with the train
// op, which is what tensorpack's RunUpdateOps adds.
std::vector<callbacks::CallbackPtr> default_callbacks();
// TFEventWriter, JSONWriter, ScalarPrinter.
std::vector<callbacks::MonitorPtr> default_monitors();

// When config.logger_dir holds a checkpoint, resume from the newest: restore it and
// continue at the epoch after the one it ended, at its global step; from a checkpoint
// made inside an epoch (ModelSaver under PeriodicTrigger by steps), with the rest of
// that epoch's steps. Otherwise `config` unchanged.
TrainConfig AutoResumeTrainConfig(TrainConfig config);

// Builds the model on the trainer (setup_graph with the model's inputs, tower function
// and optimizer) and trains with the config.
void launch_train_with_config(TrainConfig config, TowerTrainer& trainer);

}  // namespace vkp::train
