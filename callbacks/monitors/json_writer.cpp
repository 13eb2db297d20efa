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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string text{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  if (in.bad() || !in.is_open()) throw Error(ErrorCode::io, path + ": cannot read the existing statistics");
  return text;
}

// Why `stats` is not a list of per-epoch objects with an integer epoch_num; empty if it is.
std::string problem_with(const nlohmann::json& stats) {
  if (stats.is_discarded()) return "it is not valid JSON";
  if (!stats.is_array()) return "it is not a JSON list";
  for (std::size_t i = 0; i < stats.size(); ++i) {
    const nlohmann::json& entry = stats[i];
    if (!entry.is_object() || !entry.contains("epoch_num") || !entry["epoch_num"].is_number_integer())
      return "entry " + std::to_string(i) + " is not an object with an integer \"epoch_num\"";
  }
  return {};
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
  entries_.clear();
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
  const nlohmann::json stats = nlohmann::json::parse(read_text(path.string()), nullptr, /*allow_exceptions=*/false);
  if (!problem_with(stats).empty()) return 0;
  std::int64_t last = 0;
  for (const nlohmann::json& entry : stats) last = std::max(last, entry["epoch_num"].get<std::int64_t>());
  return last;
}

void JSONWriter::load_existing(int starting_epoch) {
  if (starting_epoch <= 1) {
    back_up("training starts at epoch 1, so it belongs to an earlier run");
    return;
  }
  const nlohmann::json stats = nlohmann::json::parse(read_text(path_), nullptr, /*allow_exceptions=*/false);
  if (const std::string problem = problem_with(stats); !problem.empty()) {
    back_up(problem);
    return;
  }
  // Epochs from starting_epoch on are being trained again: their old entries go.
  for (const nlohmann::json& entry : stats)
    if (entry["epoch_num"].get<std::int64_t>() < starting_epoch) entries_.push_back(entry.dump());
  log_info("Found existing JSON inside {}, will append to it (keeping {} of its {} epochs).",
           std::filesystem::path(path_).parent_path().string(), entries_.size(), stats.size());
}

void JSONWriter::restored_history(
    std::map<std::string, std::vector<std::pair<std::int64_t, double>>>& into) const {
  for (const std::string& text : entries_) {
    const nlohmann::json entry = nlohmann::json::parse(text);
    const std::int64_t step = entry.contains("global_step") && entry["global_step"].is_number_integer()
                                  ? entry["global_step"].get<std::int64_t>()
                                  : -1;
    for (const auto& [name, value] : entry.items()) {
      if (name == "epoch_num" || name == "global_step") continue;
      if (value.is_number()) into[name].emplace_back(step, value.get<double>());
      else if (value.is_null()) into[name].emplace_back(step, std::numeric_limits<double>::quiet_NaN());
    }
  }
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
  entries_.push_back(entry.dump());
  epoch_.clear();

  std::string text = "[\n";
  for (std::size_t i = 0; i < entries_.size(); ++i) text += entries_[i] + (i + 1 < entries_.size() ? ",\n" : "\n");
  text += "]\n";
  write_file_atomically(path_, text);
}

}  // namespace vkp::callbacks
