// LMDB databases as dataflows, and tensorpack's LMDBSerializer (through Debian's liblmdb).
//
//   LMDBData flow("train.lmdb", /*shuffle=*/true, /*seed=*/1);   // [key, value] as u8 arrays
//   LMDBSerializer::save(df, "train.lmdb");                      // any finite flow
//   std::unique_ptr<DataFlow> back = LMDBSerializer::load("train.lmdb");
//
// Layout, as tensorpack writes it: one file (LMDB's MDB_NOSUBDIR, tensorpack's
// subdir=False), the i-th datapoint under the key of i in 8 decimal digits ("00000042").
// The values are vkpack's datapoint bytes (dataflow/internal/datapoint_codec.h), not tensorpack's
// msgpack, so the two libraries share the layout, not the values: LMDBData reads any
// LMDB file, tensorpack's too, as [key, value] bytes, for a decoder of the user's. No
// "__keys__" entry is written (tensorpack lists the keys without it, as LMDBData does; one
// present is skipped). Reading trusts LMDB's pages as liblmdb does (it does not check
// them: a file from a stranger may crash it); each value is checked as it is decoded, and
// a damaged one is reported with its key.
#pragma once

#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/rng.h"
#include "dataflow/dataflow.h"

namespace vkp::dataflow {

class LMDBData : public DataFlow {
 public:
  // Opens `path` read-only and lists its keys in LMDB's order (bytewise), "__keys__" left
  // out. Error(io) naming the file and LMDB's reason when it cannot be opened.
  // `shuffle`: a new order each epoch, from `seed` (replayable).
  explicit LMDBData(std::filesystem::path path, bool shuffle = true, std::uint64_t seed = 0);
  ~LMDBData() override;

  std::optional<std::size_t> size() const override { return keys_.size(); }

 protected:
  void on_reset_state() override;
  void on_start_epoch() override;
  std::optional<Datapoint> on_next() override;
  // The datapoint of one key and its value; [key, value] as u8 arrays here.
  virtual Datapoint decode(const std::string& key, std::span<const std::uint8_t> value) const;
  const std::filesystem::path& path() const { return path_; }

 private:
  struct Handles;
  std::filesystem::path path_;
  std::unique_ptr<Handles> db_;
  std::vector<std::string> keys_;
  bool shuffle_;
  std::uint64_t seed_;
  Rng rng_;
  std::vector<std::size_t> order_;
  std::size_t position_ = 0;
};

struct LMDBSerializer {
  // Writes one epoch of `df` (reset here if it was not) to `path`, committing every
  // `write_frequency` datapoints (tensorpack's argument), atomically: a crash leaves the
  // old file or the new one. Returns the datapoints written; Error(io) on failure.
  static std::size_t save(DataFlow& df, const std::filesystem::path& path, std::size_t write_frequency = 5000);
  // The datapoints save() wrote, in key order or shuffled.
  static std::unique_ptr<DataFlow> load(const std::filesystem::path& path, bool shuffle = true, std::uint64_t seed = 0);
};

}  // namespace vkp::dataflow
