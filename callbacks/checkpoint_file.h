// Checkpoints: model-<global_step>.safetensors files in a directory, each holding every
// variable of a session (trainable ones, optimizer slots, moving averages) with the
// global step, the epoch and the hyperparameters in its metadata, and a `checkpoint`
// file naming the latest, as TensorFlow's saver keeps them. Files are written to a
// temporary name, flushed and renamed, so a crash or a full disk never leaves a broken
// checkpoint and the previous one stays intact.
//
// This file reads and writes them from names and arrays only (core, no graph, no
// device), so the fuzz targets of tests/fuzz compile it alone.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/array.h"

namespace vkp::callbacks {

struct CheckpointInfo {
  std::int64_t global_step = 0;
  int epoch = 0;                                 // the last epoch completed
  std::int64_t local_step = 0;                   // steps of the epoch after it trained (saved inside an epoch)
  std::map<std::string, float> hyperparameters;  // by name
};

struct Checkpoint {
  std::map<std::string, Array> variables;
  CheckpointInfo info;
};

// The index file of a checkpoint directory, TensorFlow's name for it.
inline constexpr const char* kCheckpointIndex = "checkpoint";
// An index larger than this is refused: it names a few files, one line each.
inline constexpr std::size_t kMaxCheckpointIndexBytes = std::size_t{1} << 20;

// Saves `values[i]` as variable `names[i]`, updates `checkpoint`, and deletes the
// oldest model-*.safetensors beyond max_to_keep (0 keeps all); as save_checkpoint of a
// session (callbacks/checkpoint.h), which reads the values and calls this.
std::string save_checkpoint(std::vector<std::string> names, std::vector<Array> values, const std::string& dir,
                            const CheckpointInfo& info, int max_to_keep, bool allow_non_finite = false);
// The file name the index text names on its first line `model_checkpoint_path: "<name>"`,
// or empty when no line has that form. `index` names the file in errors. A name with a
// path in it is Error(bad_data) (see latest_checkpoint).
std::string parse_checkpoint_index(std::string_view text, const std::string& index);

// The checkpoint the directory's `checkpoint` file names, or empty when there is none.
// A name with a path in it ("../x", "/etc/x", "sub/x") is Error(bad_data): an index only
// ever names a file of its own directory, so a downloaded one cannot point a resumed run
// at files elsewhere.
std::string latest_checkpoint(const std::string& dir);

// tensorpack's get_all_checkpoints: the model-<step>.safetensors files of `dir` with
// their steps, the lowest step first; none when `dir` does not exist.
std::vector<std::pair<std::string, std::int64_t>> all_checkpoints(const std::string& dir);

// tensorpack's get_checkpoint_path: `path` itself when it is a file, and for a directory
// the checkpoint its index names (else its newest model-*.safetensors); Error(not_found)
// naming `path` when there is none.
std::string checkpoint_path(const std::string& path);

// The checkpoint a resumed run starts from, or empty when `dir` holds none. With an
// index, the file it names: an index that does not parse, or names a missing or damaged
// file, is an Error (never a silent start from scratch over existing checkpoints).
// Without one, the newest model-*.safetensors that loads, each skipped file and the
// choice logged.
// `through_epoch`: only a checkpoint of at most that many completed epochs qualifies
// (see AutoResumeTrainConfig); the newer ones are passed over, and that is logged.
std::string resume_checkpoint(const std::string& dir, std::optional<std::int64_t> through_epoch = std::nullopt);

// Reads a checkpoint file; Error naming it when missing or corrupt.
Checkpoint load_checkpoint(const std::string& path);

}  // namespace vkp::callbacks
