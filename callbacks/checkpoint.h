// Checkpoints: model-<global_step>.safetensors files in a directory, each holding every
// variable of a session (trainable ones, optimizer slots, moving averages) with the
// global step, the epoch and the hyperparameters in its metadata, and a `checkpoint`
// file naming the latest, as TensorFlow's saver keeps them. Files are written to a
// temporary name, flushed and renamed, so a crash or a full disk never leaves a broken
// checkpoint and the previous one stays intact.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/array.h"
#include "engine/graph/session.h"

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

// Saves every variable of the graph, updates `checkpoint`, and deletes the oldest
// model-*.safetensors beyond max_to_keep (0 keeps all). Returns the file's path. A
// variable with NaN or infinite values is an Error naming it, and nothing is written,
// unless allow_non_finite.
std::string save_checkpoint(graph::Session& session, const std::string& dir, const CheckpointInfo& info,
                            int max_to_keep, bool allow_non_finite = false);
// The same for variables read already: names[i] holds values[i].
std::string save_checkpoint(std::vector<std::string> names, std::vector<Array> values, const std::string& dir,
                            const CheckpointInfo& info, int max_to_keep, bool allow_non_finite = false);
// Every variable of the graph (slots and moving averages too), by name, in creation order.
std::vector<std::string> variable_names(const graph::Graph& graph);

// The checkpoint the directory's `checkpoint` file names, or empty when there is none.
// A name with a path in it ("../x", "/etc/x", "sub/x") is Error(bad_data): an index only
// ever names a file of its own directory, so a downloaded one cannot point a resumed run
// at files elsewhere.
std::string latest_checkpoint(const std::string& dir);

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

// The info of the session as it is now (global step, hyperparameters; `epoch` given).
CheckpointInfo session_info(graph::Session& session, int epoch);

}  // namespace vkp::callbacks
