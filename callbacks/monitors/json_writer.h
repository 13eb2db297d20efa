// JSONWriter: keeps <logger_dir>/stats.json, as tensorpack's JSONWriter: a JSON list with
// one object per epoch, holding the latest value of every scalar put during that epoch
// plus "epoch_num" and "global_step":
//
//   [
//   {"accuracy":0.875,"epoch_num":1,"global_step":468,"loss":0.3125},
//   {"accuracy":0.90625,"epoch_num":2,"global_step":936,"loss":0.25}
//   ]
//
// (keys sorted; a NaN or infinite value, which JSON cannot hold, is written as null).
// The file is replaced atomically at the end of every epoch (write_file_atomically).
//
// Resume: when training starts at epoch > 1 and stats.json exists, its entries for the
// epochs before the starting one are kept and the new epochs appended. An existing file
// that is malformed, or that a run starting at epoch 1 would overwrite, is first renamed
// to stats.json.<MMDD-HHMMSS> with a warning. The kept entries become the Monitors'
// history (restored_history), which is how MinSaver/MaxSaver remember their best. Without a logger directory JSONWriter
// warns once and writes nothing.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "callbacks/monitors.h"
#include "callbacks/monitors/stats_file.h"

namespace vkp::callbacks {

class JSONWriter : public Monitor {
 public:
  static constexpr const char* kFileName = "stats.json";

  void setup(TrainerView& trainer) override;
  void process_scalar(const std::string& name, double value, std::int64_t step) override;
  void trigger_epoch() override;
  // The kept entries' scalars at their global_step (null as NaN).
  void restored_history(std::map<std::string, std::vector<std::pair<std::int64_t, double>>>& into) const override;

  // <logger_dir>/stats.json; empty before setup and without a logger directory.
  const std::string& path() const { return path_; }

  // The last epoch whose statistics `logger_dir`'s stats.json records: 0 when there is
  // no file (or it is not vkpack's list of epochs).
  static std::int64_t last_recorded_epoch(const std::string& logger_dir);

 private:
  void load_existing(int starting_epoch);
  void back_up(const std::string& reason);

  std::string path_;
  std::vector<StatsEntry> kept_;         // one per epoch, kept from the file or written, in order
  std::map<std::string, double> epoch_;  // this epoch's latest value of each scalar
};

}  // namespace vkp::callbacks
