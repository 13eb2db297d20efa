#include "train/train_config.h"

#include "callbacks/checkpoint.h"
#include "callbacks/monitors/json_writer.h"
#include "callbacks/monitors/scalar_printer.h"
#include "callbacks/monitors/tf_event_writer.h"
#include "callbacks/pictures.h"
#include "callbacks/progress_bar.h"
#include "callbacks/summary.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"
#include "train/tower_trainer.h"

namespace vkp::train {

std::vector<callbacks::CallbackPtr> default_callbacks() {
  return {std::make_shared<callbacks::MovingAverageSummary>(), std::make_shared<callbacks::ActivationSummaries>(),
          std::make_shared<callbacks::ProgressBar>()};
}

std::vector<callbacks::MonitorPtr> default_monitors() {
  return {std::make_shared<callbacks::TFEventWriter>(), std::make_shared<callbacks::JSONWriter>(),
          std::make_shared<callbacks::ScalarPrinter>()};
}

TrainConfig AutoResumeTrainConfig(TrainConfig config) {
  if (config.logger_dir.empty()) return config;
  for (const std::string& path : remove_stale_temporaries(config.logger_dir))
    log_info("removed {}, left by a run killed while it wrote", path);
  // An epoch's end counts once its statistics are written (stats.json, the last monitor
  // of the epoch): a checkpoint written before a kill that came before them is passed
  // over, and the epoch is trained again, so no epoch's statistics, validation or
  // best-model decision is lost. Without a JSONWriter there is nothing to wait for.
  std::optional<std::int64_t> through;
  bool json = !config.monitors;  // the defaults include one
  for (const callbacks::MonitorPtr& m : config.monitors.value_or(std::vector<callbacks::MonitorPtr>{}))
    json |= dynamic_cast<const callbacks::JSONWriter*>(m.get()) != nullptr;
  if (json) through = callbacks::JSONWriter::last_recorded_epoch(config.logger_dir);
  const std::string latest = callbacks::resume_checkpoint(config.logger_dir, through);
  if (latest.empty()) return config;
  const callbacks::Checkpoint c = callbacks::load_checkpoint(latest);
  if (c.info.local_step > 0)
    log_info("resuming from {}: saved at global step {}, after {} steps of epoch {}", latest, c.info.global_step,
             c.info.local_step, c.info.epoch + 1);
  else
    log_info("resuming from {}: epoch {} ended at global step {}", latest, c.info.epoch, c.info.global_step);
  config.session_init = std::make_shared<SaverRestore>(latest);
  config.starting_epoch = c.info.epoch + 1;
  config.starting_global_step = c.info.global_step;
  config.starting_local_step = c.info.local_step;
  return config;
}

void launch_train_with_config(TrainConfig config, TowerTrainer& trainer) {
  if (!config.model) throw Error(ErrorCode::invalid_argument, "TrainConfig has no model");
  auto bad = [](const std::string& what) { throw Error(ErrorCode::invalid_argument, "TrainConfig: " + what); };
  if (config.steps_per_epoch < 0)
    bad("steps_per_epoch is " + std::to_string(config.steps_per_epoch) + "; give a positive number, or 0 for the "
        "input's size");
  if (config.starting_epoch < 1) bad("starting_epoch is " + std::to_string(config.starting_epoch) + "; epochs count from 1");
  // A resumed run that had finished starts after its last epoch and trains none.
  if (config.max_epoch < config.starting_epoch - 1)
    bad("max_epoch " + std::to_string(config.max_epoch) + " is before starting_epoch " +
        std::to_string(config.starting_epoch));
  if (config.starting_global_step < -1)
    bad("starting_global_step is " + std::to_string(config.starting_global_step) + "; -1 derives it from starting_epoch");
  InputSourcePtr source = config.data;
  if (!source) {
    if (!config.dataflow) throw Error(ErrorCode::invalid_argument, "TrainConfig needs a dataflow or an input source");
    source = std::make_shared<QueueInput>(std::move(config.dataflow));
  }
  std::shared_ptr<ModelDesc> model = config.model;
  if (config.mixed_precision) trainer.enable_mixed_precision(config.loss_scale);
  trainer.setup_graph(
      model->inputs(), source, [model](const std::vector<graph::Tensor>& in) { return model->build_graph(in); },
      [model](graph::Graph& g) { return model->optimizer(g); });
  TrainOptions o;
  static_cast<TrainLoopOptions&>(o) = config;
  o.callbacks = config.callbacks;
  const std::vector<callbacks::CallbackPtr> extra = config.extra_callbacks ? *config.extra_callbacks : default_callbacks();
  o.callbacks.insert(o.callbacks.end(), extra.begin(), extra.end());
  o.monitors = config.monitors ? *config.monitors : default_monitors();
  trainer.train(std::move(o));
}

}  // namespace vkp::train
