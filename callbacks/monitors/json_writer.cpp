#include "callbacks/monitors/json_writer.h"

#include <chrono>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <system_error>

#include "core/atomic_file.h"
#include "core/error.h"
#include "core/log.h"

namespace vkp::callbacks {
namespace {

// The file's text, or a text parse_stats refuses when it is larger than it reads.
std::string read_text(const std::string& path) {
  std::error_code error;
  const std::uintmax_t size = std::filesystem::file_size(path, error);
  if (!error && size > kMaxStatsBytes) return std::string(kMaxStatsBytes + 1, ' ');
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad() || !in.is_open()) throw Error(ErrorCode::io, path + ": cannot read the existing statistics");
  return text;
}

// "<path>.<MMDD-HHMMSS>", numbered if that exists too: tensorpack's backup name.
std::string backup_name(const std::string& path) {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  std::tm local{};
  localtime_r(&now, &local);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, ".%m%d-%H%M%S", &local);
  const std::string base = path + stamp;
  std::string name = base;
  for (int n = 1; std::filesystem::exists(name); ++n) name = base + "." + std::to_string(n);
  return name;
}

}  // namespace

void JSONWriter::setup(TrainerView& trainer) {
  Monitor::setup(trainer);
  path_.clear();
  kept_.clear();
  epoch_.clear();
  if (trainer.logger_dir().empty()) {
    log_warn("logger directory was not set. Ignore JSONWriter.");
    return;
  }
  path_ = (std::filesystem::path(trainer.logger_dir()) / kFileName).string();
  if (std::filesystem::exists(path_)) load_existing(trainer.starting_epoch());
}

std::int64_t JSONWriter::last_recorded_epoch(const std::string& logger_dir) {
  const std::filesystem::path path = std::filesystem::path(logger_dir) / kFileName;
  if (!std::filesystem::exists(path)) return 0;
  const Stats stats = parse_stats(read_text(path.string()));
  std::int64_t last = 0;
  for (const StatsEntry& entry : stats.entries) last = std::max(last, entry.epoch);
  return last;
}

void JSONWriter::load_existing(int starting_epoch) {
  if (starting_epoch <= 1) {
    back_up("training starts at epoch 1, so it belongs to an earlier run");
    return;
  }
  Stats stats = parse_stats(read_text(path_));
  if (!stats.problem.empty()) {
    back_up(stats.problem);
    return;
  }
  // Epochs from starting_epoch on are being trained again: their old entries go.
  for (StatsEntry& entry : stats.entries)
    if (entry.epoch < starting_epoch) kept_.push_back(std::move(entry));
  log_info("Found existing JSON inside {}, will append to it (keeping {} of its {} epochs).",
           std::filesystem::path(path_).parent_path().string(), kept_.size(), stats.entries.size());
}

void JSONWriter::restored_history(
    std::map<std::string, std::vector<std::pair<std::int64_t, double>>>& into) const {
  for (const StatsEntry& entry : kept_)
    for (const auto& [name, value] : entry.scalars) into[name].emplace_back(entry.global_step, value);
}

void JSONWriter::back_up(const std::string& reason) {
  const std::string backup = backup_name(path_);
  std::error_code error;
  std::filesystem::rename(path_, backup, error);
  if (error) throw Error(ErrorCode::io, path_ + ": cannot back it up to " + backup + ": " + error.message());
  log_warn("{}: {}; moved it to {} and starting a new one.", path_, reason, backup);
}

void JSONWriter::process_scalar(const std::string& name, double value, std::int64_t) {
  if (!path_.empty()) epoch_[name] = value;
}

void JSONWriter::trigger_epoch() {
  if (path_.empty()) return;
  nlohmann::json entry = nlohmann::json::object();
  for (const auto& [name, value] : epoch_) entry[name] = value;
  entry["epoch_num"] = trainer().epoch_num();
  entry["global_step"] = trainer().global_step();
  StatsEntry& kept = kept_.emplace_back();
  kept.epoch = trainer().epoch_num();
  kept.global_step = trainer().global_step();
  kept.scalars = std::move(epoch_);
  kept.json = entry.dump();
  epoch_.clear();

  std::string text = "[\n";
  for (std::size_t i = 0; i < kept_.size(); ++i) text += kept_[i].json + (i + 1 < kept_.size() ? ",\n" : "\n");
  text += "]\n";
  write_file_atomically(path_, text);
}

}  // namespace vkp::callbacks
