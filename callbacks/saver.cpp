#include "callbacks/saver.h"

#include <cmath>
#include <filesystem>

#include "callbacks/checkpoint.h"
#include "callbacks/monitors.h"
#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {
namespace {

namespace fs = std::filesystem;

std::string directory_or_log(const std::string& dir, const TrainerView& trainer, const std::string& who) {
  const std::string out = dir.empty() ? trainer.logger_dir() : dir;
  if (out.empty())
    throw Error(ErrorCode::invalid_argument, who + " needs a checkpoint directory: give one, or train with a log directory");
  return out;
}

}  // namespace

ModelSaver::ModelSaver(int max_to_keep, std::string checkpoint_dir, bool allow_non_finite)
    : max_to_keep_(max_to_keep), dir_(std::move(checkpoint_dir)), allow_non_finite_(allow_non_finite) {
  chief_only_ = true;
}

void ModelSaver::on_setup_graph() {
  dir_ = directory_or_log(dir_, trainer(), "ModelSaver");
  std::error_code ec;
  fs::create_directories(dir_, ec);
  if (ec) throw Error(ErrorCode::io, "ModelSaver cannot create " + dir_ + ": " + ec.message());
  for (const std::string& path : remove_stale_temporaries(dir_))
    log_info("removed {}, left by a run killed while it wrote", path);
}

void ModelSaver::on_trigger() {
  // Epochs completed: a trigger inside an epoch (PeriodicTrigger by steps, after the
  // step of local_step()) has not completed the current one, of which it has trained
  // local_step() + 1 steps; a resumed run trains the rest of that epoch. Before training
  // (PeriodicTrigger's before_train) epoch_num() counts the epochs done.
  TrainerView& t = trainer();
  CheckpointInfo info;
  const bool inside = t.epoch_num() >= t.starting_epoch() && t.local_step() < t.steps_per_epoch();
  info.epoch = inside ? t.epoch_num() - 1 : t.epoch_num();
  info.local_step = inside ? t.local_step() + 1 : 0;
  info.global_step = t.global_step();
  for (const auto& [name, initial] : t.graph().hyperparameters()) info.hyperparameters[name] = t.hyperparameter(name);
  std::vector<std::string> names = variable_names(t.graph());
  std::vector<Array> values = t.variable_values(names);  // the trainer syncs its state first
  last_saved_ = save_checkpoint(std::move(names), std::move(values), dir_, info, max_to_keep_, allow_non_finite_);
  log_info("model saved to {}", last_saved_);
}

MinSaver::MinSaver(std::string stat, bool reverse, std::string filename, std::string checkpoint_dir)
    : stat_(std::move(stat)), reverse_(reverse), filename_(std::move(filename)), dir_(std::move(checkpoint_dir)) {
  chief_only_ = true;
  if (filename_.empty()) filename_ = std::string(reverse_ ? "max-" : "min-") + stat_ + ".safetensors";
}

void MinSaver::on_setup_graph() { dir_ = directory_or_log(dir_, trainer(), reverse_ ? "MaxSaver" : "MinSaver"); }

void MinSaver::on_before_train() {
  best_.reset();
  const Monitors& m = trainer().monitors();
  if (!m.has_history(stat_) || !fs::exists(fs::path(dir_) / filename_)) return;
  for (const auto& [step, value] : m.get_history(stat_))
    if (std::isfinite(value) && (!best_ || (reverse_ ? value > *best_ : value < *best_))) best_ = value;
  if (best_) log_info("{}: best {} of the resumed run: {}", reverse_ ? "MaxSaver" : "MinSaver", stat_, *best_);
}

void MinSaver::on_trigger() {
  Monitors& m = trainer().monitors();
  if (!m.has(stat_)) {
    log_warn("{}: no statistic '{}' this epoch", reverse_ ? "MaxSaver" : "MinSaver", stat_);
    return;
  }
  const double value = m.get_latest(stat_);
  if (!std::isfinite(value)) {
    log_warn("{}: {} is {} this epoch; the best model is kept", reverse_ ? "MaxSaver" : "MinSaver", stat_, value);
    return;
  }
  if (best_ && (reverse_ ? value <= *best_ : value >= *best_)) return;
  best_ = value;
  const std::string latest = latest_checkpoint(dir_);
  if (latest.empty())
    throw Error(ErrorCode::not_found, "MinSaver/MaxSaver found no checkpoint in " + dir_ + ": put a ModelSaver before it");
  const fs::path target = fs::path(dir_) / filename_, temporary = target.string() + ".tmp";
  std::error_code ec;
  fs::copy_file(latest, temporary, fs::copy_options::overwrite_existing, ec);
  if (!ec) fs::rename(temporary, target, ec);
  if (ec) throw Error(ErrorCode::io, "cannot copy " + latest + " to " + target.string() + ": " + ec.message());
  log_info("{} {} = {}: saved {}", reverse_ ? "best (max)" : "best (min)", stat_, value, target.string());
}

}  // namespace vkp::callbacks
